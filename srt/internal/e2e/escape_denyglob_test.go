//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEscapeAvailabilityDenyGlobFlood: a deny pattern that must be
// expanded (denyRead "./**/.env", with allowWrite ".") used to stop srt
// when its walk passed 100000 entries or its matches needed more than
// 10000 mounts. A command that may write the working directory could fill
// it that far, and every later run with these settings failed before the
// command started (found by the fresh review). Now srt hides the directory
// that filled it whole and says so: the run goes on, what the command
// wrote there cannot be read, and the other .env files stay hidden.
//
// Three floods, made from the host side as the review's command made them
// inside: 100001 files in junk (the walk); 1000 files in big and 101
// symlinks to it in loop, which the expansion follows, each walking big
// again (the walk, for a few files); 10001 directories in many each
// holding a .env, each the file and a pin of its directory (the mounts).
// As root the workspaces are on a tmpfs: on the test VM's ext4 making
// 10002 entries took 5 to 7 s per user, on a tmpfs 0.2 s.
func TestEscapeAvailabilityDenyGlobFlood(t *testing.T) {
	fastWorkspaces(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(`{"denyRead":["./**/.env"],"allowWrite":["."],"denyWrite":[]}`)
		w.write("home/proj/src/.env", "SRC-SECRET")
		// Control: the settings run, the command writes in junk, big and
		// many and reads it back, and the .env is hidden.
		expect(t, w.sh(s, "mkdir junk big loop many && for d in junk big many; do echo $d-NOTE > $d/note; done && cat junk/note big/note many/note; cat src/.env; echo RAN"),
			0, "junk-NOTE", "big-NOTE", "many-NOTE", "cat: src/.env: Permission denied", "RAN", "!SRC-SECRET", "!warning")
		hidden := func(r result, dirs ...string) {
			t.Helper()
			want := []string{"RAN", "cat: src/.env: Permission denied", "!SRC-SECRET"}
			for _, d := range dirs {
				want = append(want, "cat: "+d+"/note: "+refusedText("ENOENT"), "!"+d+"-NOTE")
			}
			expect(t, r, 0, want...)
		}
		const walked = ` entries expanding it would walk, and a sandbox may write there; srt hides it whole rather than expand the pattern in it: remove what filled it, or anchor the pattern`

		fillFiles(t, filepath.Join(w.dir, "junk"), 100001)
		r := w.sh(s, "cat junk/note src/.env; echo RAN")
		hidden(r, "junk")
		expect(t, r, 0, `srt: warning: filesystem.denyRead.0 "./**/.env": `+w.dir+`/junk holds 100002 of the more than 100000`+walked)

		fillFiles(t, filepath.Join(w.dir, "big"), 1000)
		for i := range 101 {
			if err := os.Symlink("../big", filepath.Join(w.dir, "loop", "l"+strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		r = w.sh(s, "cat junk/note big/note loop/l0/note src/.env; echo RAN")
		hidden(r, "junk", "big")
		expect(t, r, 0, "cat: loop/l0/note: "+refusedText("ENOENT"), w.dir+`/junk holds 100002 of the more than 100000`+walked,
			`srt: warning: filesystem.denyRead.0 "./**/.env": `+w.dir+`/big holds `, w.dir+"/big holds")

		fillDirs(t, filepath.Join(w.dir, "many"), 10001, ".env")
		r = w.sh(s, "cat junk/note big/note many/note many/d0/.env src/.env; echo RAN")
		hidden(r, "junk", "big", "many")
		expect(t, r, 0, "cat: many/d0/.env: "+refusedText("ENOENT"),
			"srt: warning: the filesystem rules need ", " mounts, more than srt's limit of 10000; "+w.dir+`/many holds 20003 of them (filesystem.denyRead.0 "./**/.env"), and a sandbox may write there; srt hides it whole rather than mount each: remove what filled it, or anchor the patterns`)
	})
}

// fillFiles makes n empty files in dir, from the host side, fast: by
// descriptor, owned by whoever runs the tests (what srt walks and mounts
// does not depend on it).
func fillFiles(t *testing.T, dir string, n int) {
	t.Helper()
	fill(t, dir, n, func(fd int, i int) error {
		return unix.Mknodat(fd, "f"+strconv.Itoa(i), unix.S_IFREG|0o644, 0)
	})
}

// fillDirs makes n directories in dir, each holding an empty file name,
// as fillFiles does.
func fillDirs(t *testing.T, dir string, n int, name string) {
	t.Helper()
	fill(t, dir, n, func(fd int, i int) error {
		d := "d" + strconv.Itoa(i)
		if err := unix.Mkdirat(fd, d, 0o755); err != nil {
			return err
		}
		return unix.Mknodat(fd, d+"/"+name, unix.S_IFREG|0o644, 0)
	})
}

func fill(t *testing.T, dir string, n int, make func(fd, i int) error) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for i := range n {
		if err := make(fd, i); err != nil {
			t.Fatalf("filling %s: %v", dir, err)
		}
	}
}

// fastWorkspaces puts the test's workspaces on a tmpfs of their own, when
// the tests run as root: srt treats it as any directory, and making many
// entries there is fast. Otherwise they stay in $TMPDIR.
func fastWorkspaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: the workspaces stay in $TMPDIR, where making the floods may be slow")
		return
	}
	dir, err := os.MkdirTemp("", "srt-e2e-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=755"); err != nil {
		os.Remove(dir)
		t.Fatalf("mounting a tmpfs for the workspaces: %v", err)
	}
	t.Cleanup(func() {
		unix.Unmount(dir, unix.MNT_DETACH)
		os.Remove(dir)
	})
	t.Setenv("TMPDIR", dir) // for newWorkspace; srt runs with w.env, without it
}
