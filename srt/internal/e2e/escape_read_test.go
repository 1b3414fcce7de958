//go:build linux

package e2e

import (
	"strconv"
	"testing"
)

// TestEscapeReadDenied tries every other name for a denied file: a file
// denied itself (mounted over with /dev/null on a nodev mount: EACCES) and
// a file inside a denied directory (an empty tmpfs: ENOENT).
func TestEscapeReadDenied(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const fileSecret, dirSecret = "SECRET-FILE-7d1c", "SECRET-DIR-40be"
		file := w.write("home/proj/secret.txt", fileSecret)
		inDir := w.write("home/vault/key", dirSecret)
		public := w.write("home/proj/public.txt", "PUBLIC-c0ffee")
		links := w.mkdir("home/proj/links")
		s := fsSettings(`{"denyRead":["secret.txt","~/vault"],"allowWrite":["."],"denyWrite":[]}`)

		for _, c := range []struct {
			path, secret, refusal string
		}{
			{file, fileSecret, "EACCES"},
			{inDir, dirSecret, refused("ENOENT")},
		} {
			check := func(p probeRun, steps ...string) {
				t.Helper()
				want(t, p, steps...)
				noLeak(t, p, c.secret)
			}
			check(w.probe(s, "read", c.path), "read", c.refusal)
			// A symlink the command makes resolves to the same masked path.
			check(w.probe(s, "read-symlink", c.path), "symlink", "ok", "read-symlink", c.refusal)
			// A hard link cannot cross from the mount over the file into
			// the working directory's mount or /dev/shm's (EXDEV); the
			// file in the denied directory is not there to link (ENOENT).
			// (The Landlock backend: a link that would grant the file
			// more than its place does lacks Landlock's refer right,
			// EXDEV; /dev/shm is another filesystem, which the kernel
			// checks first.)
			link := "EXDEV"
			if c.path == inDir && testBackend != "landlock" {
				link = "ENOENT"
			}
			check(w.probe(s, "hardlink", c.path, links), "hardlink", link)
			check(w.probe(s, "hardlink", c.path, "/dev/shm"), "hardlink", link)
			// /proc/self/root is the sandbox's own root: the same mounts.
			check(w.probe(s, "read-proc-root", "self", c.path), "read-proc-root@self", c.refusal)
			// /proc/1/root is the init stage's, which is not dumpable: the
			// link cannot be followed at all (EACCES, whatever the file).
			check(w.probe(s, "read-proc-root", "1", c.path), "read-proc-root@1", "EACCES")
			// Every process the command can see: init, and a sibling
			// that can be followed but has the same mounts.
			p := w.probeShell(s, `sleep 30 & exec "$PROBE" read-proc-roots `+c.path)
			check(p)
			roots := p.stepsWithPrefix("read-proc-root")
			if testBackend == "landlock" {
				// No PID namespace: every process of the host is there.
				// Landlock's ptrace scope refuses the others' roots
				// (EACCES), the sibling's holds the same rules; one that
				// ended before the probe got to it is ENOENT.
				for pid, outcome := range roots {
					if outcome != "EACCES" && outcome != "ENOENT" {
						t.Fatalf("ESCAPE: /proc/%s/root%s: want EACCES, got %s\n%s", pid, c.path, outcome, p.result)
					}
				}
				if len(roots) < 2 {
					t.Fatalf("the probe saw %d processes: %v", len(roots), roots)
				}
				continue
			}
			if len(roots) != 2 || roots["1"] != "EACCES" {
				t.Fatalf("want init (EACCES) and the sibling sleep: %v\n%s", roots, p.result)
			}
			for pid, outcome := range roots {
				if pid != "1" && outcome != c.refusal {
					t.Fatalf("/proc/%s/root%s: want %s, got %s", pid, c.path, c.refusal, outcome)
				}
			}
		}

		// Control: the same attacks on a readable file get its content,
		// except through init's /proc/1/root.
		for _, args := range [][]string{
			{"read", public},
			{"read-symlink", public},
			{"hardlink", public, links},
			{"read-proc-root", "self", public},
		} {
			p := w.probe(s, args...)
			expect(t, p.result, 0, "DATA PUBLIC-c0ffee")
		}
		p := w.probeShell(s, `sleep 30 & exec "$PROBE" read-proc-roots `+public)
		roots := p.stepsWithPrefix("read-proc-root")
		ok := 0
		for _, o := range roots {
			if o == "ok" {
				ok++
			}
		}
		if testBackend == "landlock" && ok > 0 && roots["1"] == "EACCES" {
			// The host's processes too (no PID namespace), refused by
			// Landlock's ptrace scope; the sandbox's own followed.
		} else if len(roots) != 2 || roots["1"] != "EACCES" || ok != 1 {
			t.Fatalf("control: want init EACCES and the sibling ok: %v\n%s", roots, p.result)
		}
		expect(t, p.result, 0, "DATA PUBLIC-c0ffee")
		// The refusal at /proc/1/root is init's (not dumpable), not the
		// file's nor the probe's: outside the sandbox the probe follows the
		// link of another process of the same user.
		marker, _ := w.hostMarker()
		pid := strconv.Itoa(marker.Process.Pid)
		want(t, w.hostProbe("read-proc-root", pid, public), "read-proc-root@"+pid, "ok")
	})
}
