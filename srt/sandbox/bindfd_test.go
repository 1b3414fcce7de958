//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/plan"
)

// TestOpenGrant: a granted path is opened only if it is still the file the
// plan identified, reached without a symlink (issue 10, item 7).
func TestOpenGrant(t *testing.T) {
	dir := t.TempDir()
	build := filepath.Join(dir, "build")
	outside := filepath.Join(dir, "outside")
	os.Mkdir(build, 0o755)
	os.Mkdir(outside, 0o755)
	grant := func(p string) plan.Mount {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return plan.Mount{Path: p, View: plan.HostRW, Why: "filesystem.allowWrite.0", Grant: true, ID: plan.FileID{Dev: uint64(st.Dev), Ino: st.Ino}}
	}
	m := grant(build)
	f, err := openGrant(m)
	if err != nil {
		t.Fatalf("control: the unchanged path does not open: %v", err)
	}
	f.Close()

	// Swapped for a symlink to the outside directory, as renameat2's
	// RENAME_EXCHANGE would.
	os.Rename(build, filepath.Join(dir, "build.real"))
	os.Symlink(outside, build)
	if _, err := openGrant(m); !errors.Is(err, plan.ErrPathChanged) {
		t.Fatalf("a path swapped for a symlink opened: %v", err)
	}
	// A symlink above the path.
	os.Remove(build)
	os.Rename(filepath.Join(dir, "build.real"), build)
	os.Symlink(dir, filepath.Join(dir, "up"))
	m2 := m
	m2.Path = filepath.Join(dir, "up", "build")
	if _, err := openGrant(m2); !errors.Is(err, plan.ErrPathChanged) {
		t.Fatalf("a path through a symlink opened: %v", err)
	}
	// Another directory at the same name.
	os.Rename(build, filepath.Join(dir, "build.old"))
	os.Mkdir(build, 0o755)
	if _, err := openGrant(m); !errors.Is(err, plan.ErrPathChanged) {
		t.Fatalf("another directory at the same name opened: %v", err)
	}
}

// TestOpenNoFollowWalk: the walk used before openat2 refuses a symlink at
// any component but the last (whose link the identity check refuses).
func TestOpenNoFollowWalk(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "l"))
	fd, err := openNoFollowWalk(filepath.Join(dir, "a", "b"))
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	unix.Close(fd)
	if fd, err := openNoFollowWalk(filepath.Join(dir, "l", "b")); !errors.Is(err, unix.ENOTDIR) {
		unix.Close(fd)
		t.Fatalf("a symlinked directory was walked through: %v", err)
	}
	fd, err = openNoFollowWalk(filepath.Join(dir, "l"))
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	unix.Close(fd)
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		t.Fatalf("the last component was followed: mode %o", st.Mode)
	}
}
