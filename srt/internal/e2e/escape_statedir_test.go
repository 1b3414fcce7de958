//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// srt's own state directory ($TMPDIR/srt-<uid>: the placeholders' lock and
// journals, the trust bundle's run directories) cannot be reached from
// inside (issue 10, item 6). Before, with allowWrite covering it, a
// planted `lock` symlink made srt create a file where the sandbox could
// not write, and a forged journal made the next srt delete empty files
// there.

// stateWorkspace is a workspace whose srt keeps its state under
// <root>/tmp, a $TMPDIR the sandbox may be allowed to write (the real /tmp
// holds the test's binaries, which srt would refuse to run from a
// directory the sandbox may write).
type stateWorkspace struct {
	*workspace
	tmp, state string
	env        []string
}

func newStateWorkspace(w *workspace) *stateWorkspace {
	tmp := w.mkdir("tmp")
	return &stateWorkspace{workspace: w, tmp: tmp, state: filepath.Join(tmp, "srt-"+itoa(w.r.uid)), env: []string{"TMPDIR=" + tmp}}
}

// run runs srt with the workspace's TMPDIR.
func (s *stateWorkspace) run(settingsJSON string, args ...string) result {
	s.t.Helper()
	return s.srtEnv(s.env, append([]string{"-s", s.settings(settingsJSON)}, args...)...)
}

func (s *stateWorkspace) probe(settingsJSON string, args ...string) probeRun {
	s.t.Helper()
	return newProbeRun(s.run(settingsJSON, append([]string{"--", probeBin(s.t)}, args...)...))
}

// placeholderRun runs a command whose plan needs a placeholder (a
// denyWrite of a missing file in a writable directory), so srt takes the
// lock and reads the journals.
func (s *stateWorkspace) placeholderRun() result {
	s.t.Helper()
	return s.run(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["./not-yet"]}`), "true")
}

// forged is a journal of a dead process naming file (an empty file) at
// path, by the file's device and inode, as srt's own journals do.
func forged(t *testing.T, path, file string) string {
	var st syscall.Stat_t
	if err := syscall.Lstat(file, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"pid":999999999,"start":1,"entries":[{"path":%q,"dir":false,"dev":%d,"ino":%d}]}`, path, st.Dev, st.Ino)
}

func TestEscapeStateDirLock(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := newStateWorkspace(w)
		open := fsSettings(`{"denyRead":[],"allowWrite":["` + s.tmp + `"],"denyWrite":[]}`)
		// The target is where the sandbox cannot write.
		target := filepath.Join(w.mkdir("victim"), "made-by-srt")
		// Control: beside the state directory, in a directory of the same
		// layout that the sandbox may write, the planting works.
		decoy := w.mkdir("tmp/srt-decoy")
		want(t, s.probe(open, "plant-symlink", target, filepath.Join(decoy, "lock")), "symlink", "ok")
		if fi, err := os.Lstat(filepath.Join(decoy, "lock")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("control: the planted symlink is not on the host: %v", err)
		}
		// The attack: the state directory is read-only inside, and cannot
		// be renamed away to be made again.
		want(t, s.probe(open, "plant-symlink", target, filepath.Join(s.state, "lock")), "symlink", refused("EROFS"))
		want(t, s.probe(open, "rename", s.state, filepath.Join(s.tmp, "moved")), "rename", refused("EBUSY"))
		expect(t, s.placeholderRun(), 0)
		if exists(target) {
			t.Fatalf("ESCAPE: srt created %s through a planted lock", target)
		}
		// Under filesystem.disabled too.
		off := fsSettings(`{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}`)
		want(t, s.probe(off, "plant-symlink", target, filepath.Join(s.state, "run-1-1-1.json")), "symlink", refused("EROFS"))
		want(t, s.probe(off, "plant-symlink", target, filepath.Join(decoy, "lock2")), "symlink", "ok")

		// Whatever put it there, srt does not follow a lock that is a
		// symlink: it stops and says so.
		os.Remove(filepath.Join(s.state, "lock"))
		if err := os.Symlink(target, filepath.Join(s.state, "lock")); err != nil {
			t.Fatal(err)
		}
		w.chown(filepath.Join(s.state, "lock"))
		expect(t, s.placeholderRun(), 1, "srt: sandbox: placeholder registry: "+s.state+"/lock is not a regular file of uid "+itoa(w.r.uid)+", so srt did not make it; something else wrote in srt's state directory: remove the directory\n")
		if exists(target) {
			t.Fatalf("ESCAPE: srt followed the lock symlink to %s", target)
		}
	})
}

func TestEscapeStateDirJournal(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := newStateWorkspace(w)
		open := fsSettings(`{"denyRead":[],"allowWrite":["` + s.tmp + `"],"denyWrite":[]}`)
		// An empty file of the user's where the sandbox cannot write.
		victim := w.write("home/empty-but-mine", "")
		journal := forged(t, victim, victim)
		decoy := w.mkdir("tmp/srt-decoy")
		want(t, s.probe(open, "plant-file", filepath.Join(decoy, "run-999999999-1-1.json"), journal), "create", "ok")
		want(t, s.probe(open, "plant-file", filepath.Join(s.state, "run-999999999-1-1.json"), journal), "create", refused("EROFS"))
		expect(t, s.placeholderRun(), 0)
		if !exists(victim) {
			t.Fatal("ESCAPE: srt deleted a file a forged journal named")
		}

		// Control: a journal the next srt trusts does what a forged one
		// would, so only the state directory's protection stood between.
		plant := func(name, content string) string {
			p := filepath.Join(s.state, name)
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			w.chown(p)
			return p
		}
		plant("run-999999999-1-1.json", journal)
		expect(t, s.placeholderRun(), 0)
		if exists(victim) {
			t.Fatal("control: srt did not collect a journal of its own making")
		}

		// What srt does not trust, whoever put it there: a journal that is
		// a symlink, one of another user's, and a journal naming the file
		// through a symlinked parent directory.
		victim = w.write("home/empty-but-mine", "")
		journal = forged(t, victim, victim)
		elsewhere := w.write("home/forged.json", journal)
		link := filepath.Join(s.state, "run-999999999-1-2.json")
		if err := os.Symlink(elsewhere, link); err != nil {
			t.Fatal(err)
		}
		w.chown(link)
		if os.Geteuid() == 0 {
			other := plant("run-999999999-1-3.json", journal)
			otherUID := 65534
			if w.r.uid == 65534 {
				otherUID = 0
			}
			os.Lchown(other, otherUID, otherUID)
		}
		w.symlink(w.home, "home/proj/via-link")
		plant("run-999999999-1-4.json", forged(t, filepath.Join(w.dir, "via-link", "empty-but-mine"), victim))
		expect(t, s.placeholderRun(), 0)
		if !exists(victim) {
			t.Fatal("ESCAPE: srt deleted a file named by a journal it must not trust")
		}
		if exists(link) {
			t.Error("the journal symlink was left in the state directory")
		}
		if data, err := os.ReadFile(elsewhere); err != nil || string(data) != journal {
			t.Errorf("the symlink's target was changed: %q %v", data, err)
		}
	})
}

// The trust bundle of tlsTerminate lives in the state directory on the
// host; inside it is bound at its own fixed path, so it still works when
// the directory is read-only there.
func TestStateDirTrustBundle(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := newStateWorkspace(w)
		settings := `{"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}},"filesystem":{"denyRead":[],"allowWrite":["` + s.tmp + `"],"denyWrite":[]}}`
		r := s.run(settings, "-c", `head -n 1 "$SSL_CERT_FILE"; echo x > `+s.state+`/f 2>/dev/null || echo refused`)
		expect(t, r, 0)
		if r.stdout != "-----BEGIN CERTIFICATE-----\nrefused\n" {
			t.Fatalf("want the bundle's first line and a refused write:\n%s", r)
		}
	})
}
