//go:build linux

package e2e

import (
	"os"
	"testing"
)

// Protected names the kernel cannot fully protect (issue 10, items 8 and
// 10): srt protects what it can and says, on every run, what it cannot.

// TestLimitSymlinkedProtectedName is item 8: a bind mount follows a
// symlink, so a protected name that is a symlink cannot itself be made
// unremovable. srt protects the target, and warns on every run, naming the
// link, when the link's directory is writable.
func TestLimitSymlinkedProtectedName(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		target := w.write("home/proj/scripts/deploy.sh", "#!/bin/sh\necho deploy\n")
		w.symlink("scripts/deploy.sh", "home/proj/deploy.sh")
		link := w.dir + "/deploy.sh"
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["deploy.sh"]}`)
		warning := `filesystem.denyWrite.0 "deploy.sh": ` + link + ` is a symlink; srt protects what it points to, but the link itself can be removed or replaced from inside`
		// The target cannot be written, through the link or directly.
		p := w.probe(s, "write", link)
		want(t, p, "write", refused("EROFS"))
		expect(t, p.result, 0, warning)
		want(t, w.probe(s, "write", target), "write", refused("EROFS"))
		// The kernel limit: the link itself goes, and a file takes its
		// place. The warning said so.
		p = w.probe(s, "replace", link, "#!/bin/sh\necho planted\n")
		if testBackend == "landlock" {
			// The Landlock backend keeps the link itself: its directory
			// takes no change of a protected name.
			want(t, p, "unlink", "EROFS", "create", "EEXIST")
		} else {
			want(t, p, "unlink", "ok", "create", "ok")
		}
		expect(t, p.result, 0, warning)
		if data, _ := os.ReadFile(target); string(data) != "#!/bin/sh\necho deploy\n" {
			t.Fatalf("ESCAPE: the link's target changed: %q", data)
		}
		if testBackend != "landlock" {
			// Now a regular file: protected whole, and no warning.
			p = w.probe(s, "replace", link, "x")
			want(t, p, "unlink", refused("EBUSY"), "create", "EEXIST")
			expect(t, p.result, 0, "!is a symlink")
		}

		// An always-protected name: ~/.bashrc managed as a symlink, with
		// $HOME writable. With $HOME read-only the link cannot be
		// replaced, and srt says nothing.
		w.write("home/dotfiles/bashrc", "# user\n")
		w.symlink("dotfiles/bashrc", "home/.bashrc")
		mandatory := "these always-protected paths are symlinks in a writable directory: " + w.home + "/.bashrc;"
		p = w.probe(homeWritable, "write", w.home+"/.bashrc")
		want(t, p, "write", refused("EROFS"))
		expect(t, p.result, 0, mandatory)
		expect(t, w.probe(fsSettings(writeCwd), "write", w.dir+"/f").result, 0, "!always-protected paths are symlinks")
	})
}

// TestLimitHardLinkedProtectedName is item 10: a protected file with a
// second hard link can be written through the other name (a mount protects
// a name, not an inode); srt warns, as it does for denyRead.
func TestLimitHardLinkedProtectedName(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		a := w.write("home/proj/a.txt", "ORIGINAL\n")
		b := w.dir + "/b.txt"
		if err := os.Link(a, b); err != nil {
			t.Fatal(err)
		}
		single := w.write("home/proj/c.txt", "ORIGINAL\n")
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["a.txt","c.txt"]}`)
		p := w.probe(s, "write", a)
		want(t, p, "write", refused("EROFS"))
		expect(t, p.result, 0, `filesystem.denyWrite.0 "a.txt" names `+a+`, which has 2 hard links: that name cannot be written, but the file's other names can`,
			"!"+single)
		// The kernel limit the warning states.
		want(t, w.probe(s, "write", b), "write", "ok")
		// Control: one link, no warning, and the same write is refused.
		p = w.probe(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["c.txt"]}`), "write", single)
		want(t, p, "write", refused("EROFS"))
		expect(t, p.result, 0, "!hard links")
	})
}
