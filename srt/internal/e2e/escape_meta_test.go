//go:build linux

package e2e

import (
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// metaSteps are the probe's "meta" steps that change something (the
// others open what they act through).
var metaSteps = []string{"chmod", "chown", "lchown", "utimensat", "utimes", "setxattr", "lsetxattr", "removexattr",
	"fchmodat", "fchownat", "utimensat-dirfd", "chmod-proc-fd", "setxattr-proc-fd", "fchownat-empty", "utimensat-empty",
	"fchmodat2-empty", "fchmod", "fchown", "futimens", "fsetxattr", "fremovexattr"}

// metaState is what the probe's "meta" would change of a file.
type metaState struct {
	mode       os.FileMode
	uid, gid   uint32
	mtime      time.Time
	xattrFound bool
}

func metaOf(t *testing.T, path string) metaState {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	_, err := unix.Lgetxattr(path, "user.srt-probe", make([]byte, 16))
	return metaState{mode: os.FileMode(st.Mode & 0o7777), uid: st.Uid, gid: st.Gid,
		mtime: time.Unix(st.Mtim.Unix()), xattrFound: err == nil}
}

// TestEscapeMetadata: the mode, owner, times and extended attributes of a
// file outside the write roots (one the user owns, a write-protected one
// inside them, a directory, one reached through a hard link) cannot be
// changed by any call, by path, directory descriptor, /proc/self/fd or
// a descriptor alone: each refused with EROFS under both backends (the
// Landlock backend's supervisor, Landlock covering none of them), the
// file unchanged on the host. Control: every call works on a file in the
// write root.
func TestEscapeMetadata(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		outside := w.write("home/outside.txt", "OUT\n")
		protected := w.write("home/proj/ro.txt", "RO\n")
		dir := w.mkdir("home/outside-dir")
		writable := w.write("home/proj/rw.txt", "RW\n")
		// A hard link outside to a file beneath the write root (in a
		// directory of it: a file of the working directory itself is
		// granted on its own under the Landlock backend, and Landlock's
		// grant holds for the inode, through every link).
		linked := w.path("home/linked.txt")
		if err := os.Link(w.write("home/proj/sub/rw.txt", "RW\n"), linked); err != nil {
			t.Fatal(err)
		}
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["ro.txt"]}`)
		for _, f := range []string{outside, protected, dir, linked} {
			before := metaOf(t, f)
			p := w.probe(s, "meta", f)
			var steps []string
			for _, st := range metaSteps {
				steps = append(steps, st, "EROFS")
			}
			want(t, p, append([]string{"open-dir", "ok", "open-path", "ok", "open-rdonly", "ok"}, steps...)...)
			if after := metaOf(t, f); after != before {
				t.Fatalf("ESCAPE: the metadata of %s changed on the host: %+v, was %+v", f, after, before)
			}
		}
		// Control: the same calls in the write root.
		p := w.probe(s, "meta", writable)
		var steps []string
		for _, st := range metaSteps {
			steps = append(steps, st, "ok")
		}
		want(t, p, steps...)
		if m := metaOf(t, writable); m.mode != 0o640 || m.mtime.Unix() != 978307200 || m.xattrFound {
			t.Fatalf("control: the calls did not reach the host: %+v", m)
		}
	})
}

// TestEscapeMetadataRace: a symlink in the write root swapped, again and
// again, between a file there and one outside while the probe changes
// the mode and times through it: each call either changes the file in the
// write root or fails with EROFS, and the file outside never changes
// (the Landlock backend's supervisor performs the call on the inode it
// decided on, never the path again).
func TestEscapeMetadataRace(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		outside := w.write("home/outside-race.txt", "OUT\n")
		allowed := w.write("home/proj/allowed-race.txt", "IN\n")
		link := w.path("home/proj/race-link")
		if err := os.Symlink(allowed, link); err != nil {
			t.Fatal(err)
		}
		w.chown(link)
		before := metaOf(t, outside)
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`)
		p := w.probe(s, "meta-race", link, allowed, outside)
		if p.code != 0 {
			t.Fatalf("the probe did not finish: %s", p.result)
		}
		if after := metaOf(t, outside); after != before {
			t.Fatalf("ESCAPE: the race changed %s on the host: %+v, was %+v\n%s", outside, after, before, p.result)
		}
		ok, _ := strconv.Atoi(p.steps["ok"])
		erofs, _ := strconv.Atoi(p.steps["erofs"])
		if ok == 0 || erofs == 0 {
			t.Fatalf("the race did not run both ways (ok %d, EROFS %d):\n%s", ok, erofs, p.result)
		}
		for step := range p.steps {
			if step != "ok" && step != "erofs" {
				t.Fatalf("a raced call failed otherwise than with EROFS:\n%s", p.result)
			}
		}
	})
}

// TestMetadataInWriteRoot: what programs do with metadata in the write
// root works under both backends (the Landlock backend's supervisor
// performs the calls): git checkout gives a file its mode back, cp -p and
// tar -p set times, chown to oneself, touch, an xattr set and read, chmod
// of the working directory itself and of a directory made inside.
func TestMetadataInWriteRoot(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/repo/x.sh", "#!/bin/sh\necho hi\n")
		os.Chmod(w.path("home/proj/repo/x.sh"), 0o755)
		for _, args := range [][]string{{"init", "-q"}, {"add", "x.sh"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"}} {
			cmd := w.hostCmd(nil, "git", append([]string{"-C", w.path("home/proj/repo")}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`)
		r := w.sh(s, `set -e
cd repo && chmod -x x.sh && test ! -x x.sh && git checkout -q -- x.sh && test -x x.sh && echo GIT-MODE && cd ..
echo a > f1 && touch -d 2001-01-01 f1 && cp -p f1 f2 && echo "CP-P $(stat -c %Y f2)"
mkdir t && touch -d 2001-01-01 t/a && tar cf t.tar t && rm -rf t && tar xpf t.tar && echo "TAR-P $(stat -c %Y t/a)"
chown "$(id -u):$(id -g)" f1 && echo CHOWN
touch f1 && test "$(stat -c %Y f1)" != 978307200 && echo TOUCH
python3 -c 'import os; os.setxattr("f1", "user.srt", b"v"); print("XATTR", os.getxattr("f1", "user.srt").decode())'
mkdir d && chmod 700 d && chmod 755 . && echo "DIRS $(stat -c %a d)"`)
		expect(t, r, 0, "GIT-MODE\n", "CP-P 978307200\n", "TAR-P 978307200\n", "CHOWN\n", "TOUCH\n", "XATTR v\n", "DIRS 700\n")
		if fi, err := os.Stat(w.path("home/proj/repo/x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("git checkout did not give x.sh its mode on the host: %v %v", fi, err)
		}
	})
}
