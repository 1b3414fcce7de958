//go:build linux

package placeholders

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A run directory outlives nothing: the next sweep removes the one of a
// process that is gone, and keeps a live process's.
func TestRunDirSwept(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mine, err := MakeRunDir()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(mine); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("run directory %v %v", fi, err)
	}
	st, _ := startTime(os.Getpid())
	// This process with another start time: a reused pid, so a dead run.
	dead := filepath.Join(filepath.Dir(mine), fmt.Sprintf("%s%d-%d-abc", runDirPrefix, os.Getpid(), st+1))
	if err := os.MkdirAll(filepath.Join(dead, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !HaveJournals() {
		t.Fatal("HaveJournals does not see the run directories")
	}
	if _, err := Open(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's directory is still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("this run's directory was removed: %v", err)
	}
}
