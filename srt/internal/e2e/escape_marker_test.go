//go:build linux

package e2e

import (
	"strings"
	"testing"
)

// lockScript is a python3 program that opens empty.env (for writing when
// rw) and takes one lock on it, prints "locked" and sleeps: lock is the
// fcntl call, as Python text.
func lockScript(rw bool, lock string) string {
	mode := `"r"`
	if rw {
		mode = `"r+"`
	}
	return `python3 -c 'import fcntl,struct,time; f=open("empty.env",` + mode + `); ` + lock + `; print("locked", flush=True); time.sleep(6)'`
}

// TestEscapePlaceholderMarkerForged tries to make srt delete a file of the
// user's (the third review's finding). A sandbox whose settings do not
// protect the user's empty file empty.env, and which may only read it,
// locks it (lockf(LOCK_SH), as the review did) and sleeps; a concurrent
// run that protects empty.env must not take it for another run's
// placeholder, adopt it and, as its last holder, remove it: the marker of
// a file placeholder is an open-file-description WRITE lock, which needs
// the file open for writing. Controls: without any lock the protecting
// run leaves the file; and a sandbox that may write empty.env, and takes
// that marker (an OFD write lock in the range srt's markers use), does
// have srt remove it, so the locking and the timing of the attack reach
// srt (such a sandbox can destroy the file's content anyway).
func TestEscapePlaceholderMarkerForged(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		p := w.write("home/proj/empty.env", "")
		protect := fsSettings(`{"denyRead":[],"denyWrite":["empty.env"],"allowWrite":["."]}`)
		// Control first: a run that protects it leaves the user's file.
		expect(t, w.sh(protect, "true"), 0)
		if !exists(p) {
			t.Fatal("control: the user's empty file went without any lock")
		}
		// The reader may write nothing, and protects nothing at empty.env
		// (so its own srt holds no use lock there, which alone would keep
		// the file).
		readOnly := fsSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`)
		writable := fsSettings(writeCwd)
		for _, c := range []struct {
			name, settings string
			script         string
			removed        bool
		}{
			{"lockf read lock by a reader", readOnly, lockScript(false, `fcntl.lockf(f, fcntl.LOCK_SH)`), false},
			{"OFD read lock by a reader", readOnly, lockScript(false, `fcntl.fcntl(f, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0))`), false},
			{"lockf write lock by a writer", writable, lockScript(true, `fcntl.lockf(f, fcntl.LOCK_EX)`), false},
			{"control: OFD write lock in the marker range by a writer", writable, lockScript(true, `fcntl.fcntl(f, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, (1<<62)+5, 1, 0))`), true},
		} {
			w.write("home/proj/empty.env", "")
			locker := w.command(nil, "-s", w.write("locker.json", c.settings), "-c", c.script)
			out := &strings.Builder{}
			locker.Stdout, locker.Stderr = out, out
			if err := locker.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return strings.Contains(out.String(), "locked") || locker.ProcessState != nil }, c.name+": the locker to lock empty.env")
			w.settings(protect)
			r := w.srt("-s", w.path("settings.json"), "-c", "true")
			locker.Process.Kill()
			locker.Wait()
			if !strings.Contains(out.String(), "locked") {
				t.Fatalf("%s: the locker did not lock: %s", c.name, out)
			}
			switch {
			case !c.removed && !exists(p):
				t.Fatalf("ESCAPE (%s): srt removed the user's empty.env, taken for another run's placeholder by a lock the command put on it\n%s", c.name, r)
			case c.removed && exists(p):
				t.Fatalf("%s: srt did not adopt and remove a file carrying the marker: the attack does not reach srt\n%s", c.name, r)
			}
		}
	})
}
