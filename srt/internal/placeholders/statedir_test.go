//go:build linux

package placeholders

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A state directory that is a symlink, or not private, is refused.
func TestStateDirRefused(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p, _ := statePath()
	other := t.TempDir()
	os.Symlink(other, p)
	if _, err := StateDir(); err == nil || !strings.Contains(err.Error(), "is not a directory owned by uid") {
		t.Fatalf("a symlinked state directory: %v", err)
	}
	os.Remove(p)
	os.Mkdir(p, 0o755)
	os.Chmod(p, 0o755)
	if _, err := StateDir(); err == nil {
		t.Fatal("a state directory others may enter was accepted")
	}
	os.Chmod(p, 0o700)
	if got, err := StateDir(); err != nil || got != p {
		t.Fatalf("StateDir() = %s, %v", got, err)
	}
}

// srt takes no lock through a symlink: it stops and says so.
func TestLockSymlinkRefused(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	os.Symlink(target, filepath.Join(r.dir.path, "lock"))
	_, err = r.Acquire([]Want{{Path: filepath.Join(t.TempDir(), "x")}})
	if err == nil || !strings.Contains(err.Error(), "/lock is not a regular file of uid") {
		t.Fatalf("want a refusal, got %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the lock's target was created: %v", err)
	}
}

// Only a regular file of the caller's is a journal; a symlink is removed
// unread, and a placeholder reached through a symlinked parent is left.
func TestJournalsTrusted(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	victim := filepath.Join(home, "empty")
	os.WriteFile(victim, nil, 0o644)
	id, _ := identity(victim)
	j := &journal{PID: 999999999, StartTime: 1, Entries: []entry{{Path: victim, Dev: id.Dev, Ino: id.Ino}}, name: "x"}
	data, _ := json.Marshal(j)
	forged := filepath.Join(t.TempDir(), "forged.json")
	os.WriteFile(forged, data, 0o600)
	os.Symlink(forged, filepath.Join(r.dir.path, "run-999999999-1-1.json"))
	// The same file through a symlinked parent.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(home, link)
	j2 := &journal{PID: 999999999, StartTime: 1, Entries: []entry{{Path: filepath.Join(link, "empty"), Dev: id.Dev, Ino: id.Ino}}, name: "run-999999999-1-2.json"}
	j2.write(r.dir)
	r.sweep()
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("an untrusted journal removed %s: %v", victim, err)
	}
	if _, err := os.Lstat(filepath.Join(r.dir.path, "run-999999999-1-1.json")); !os.IsNotExist(err) {
		t.Errorf("the journal symlink is still there: %v", err)
	}
	// Control: the same journal, a file of srt's, is collected.
	j.name = "run-999999999-1-3.json"
	j.write(r.dir)
	r.sweep()
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("control: a journal of srt's own was not collected: %v", err)
	}
}
