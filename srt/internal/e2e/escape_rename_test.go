//go:build linux

package e2e

import (
	"os/exec"
	"testing"
)

// TestEscapeRenamePinned tries to move protected paths out of the way in a
// git repository with the working directory writable: a protected path's
// writable ancestors are pinned (bound onto themselves), and a mount point
// can be neither renamed nor removed (EBUSY, which the kernel checks before
// it looks at whether the directory is empty).
func TestEscapeRenamePinned(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		git := exec.Command("git", "init", "-q", w.dir)
		git.Env = w.env()
		w.asRunner(git)
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		w.write("home/proj/a/b/.bashrc", "# protected\n")
		w.write("home/proj/file.txt", "")
		w.mkdir("home/proj/free")
		w.mkdir("home/proj/empty")
		s := fsSettings(writeCwd)
		for _, c := range [][]string{
			{"rename", ".git", ".g"},
			{"rename", ".git/hooks", ".git/h"}, // itself a read-only mount
			{"rename", "a", "x"},
			{"rename", "a/b", "a/c"},
			{"rename", "file.txt", ".bashrc"}, // over a placeholder's mount
			{"rmdir", ".git"},
			{"rmdir", "a"},
			{"rmdir", "a/b"},
		} {
			want(t, w.probe(s, c...), c[0], refused("EBUSY"))
		}
		for _, p := range []string{".git/hooks", ".git/config", "a/b/.bashrc", "file.txt"} {
			if !exists(w.path("home/proj/" + p)) {
				t.Fatalf("ESCAPE: %s moved on the host", p)
			}
		}
		// Controls: directories nothing protected lies under move and go.
		want(t, w.probe(s, "rename", "free", "moved"), "rename", "ok")
		want(t, w.probe(s, "rmdir", "empty"), "rmdir", "ok")
		if !exists(w.path("home/proj/moved")) || exists(w.path("home/proj/empty")) {
			t.Fatal("control rename/rmdir did not reach the host")
		}
	})
}
