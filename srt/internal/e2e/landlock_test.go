//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// landlockArgs select the Landlock backend (as root: accepting that
// Landlock does not cover chmod, which TestLandlockRootRefused checks).
func landlockArgs(w *workspace) []string {
	a := []string{"--backend", "landlock"}
	if w.r.uid == 0 {
		a = append(a, "--allow-weaker=root")
	}
	return a
}

func (w *workspace) landlock(settingsJSON, command string) result {
	w.t.Helper()
	return w.srt(append(landlockArgs(w), "-s", w.settings(settingsJSON), "-c", command)...)
}

// TestLandlockBackendRules: the Landlock backend enforces the filesystem
// rules (with EACCES where bubblewrap says EROFS), lets the command make a
// file at the top of its working directory (a chain directory, above the
// mandatory .bashrc: the init stage's supervisor makes it), and what it must add
// without namespaces: TCP only to srt-proxy's ports, no UDP, no signal to
// host processes or kill(-1), no System V IPC, a private TMPDIR that is
// gone afterwards, and one warning line.
func TestLandlockBackendRules(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/existing.txt", "old")
		w.write("home/proj/sub/keep", "")
		w.write("home/secret/key", "SECRET")
		marker, _ := w.hostMarker()
		pid := strconv.Itoa(marker.Process.Pid)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":["` + w.path("home/secret") + `"]}`)
		r := w.landlock(s, strings.Join([]string{
			`echo new > existing.txt && echo WRITE-EXISTING-ok`,
			`echo new > sub/made && echo WRITE-SUBDIR-ok`,
			`echo x > top-new && echo CREATE-TOP-ok`,
			`echo x > .bashrc 2>/dev/null || echo BASHRC-refused`,
			`echo x > ` + w.path("outside") + ` 2>/dev/null || echo OUTSIDE-refused`,
			`cat ` + w.path("home/secret/key") + ` 2>&1 | sed 's/^/SECRET: /'`,
			`echo t > "$TMPDIR/t" && echo TMPDIR-ok && stat -c 'TMPMODE %a' "$TMPDIR" && echo "TMPPATH $TMPDIR"`,
			`python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' 2>&1 | tail -1 | sed 's/^/UDP: /'`,
			`python3 -c 'import socket; s=socket.socket(); s.connect(("127.0.0.1", 1))' 2>&1 | tail -1 | sed 's/^/TCP: /'`,
			`python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0))' 2>&1 | tail -1 | sed 's/^/BIND: /'`,
			`kill -0 ` + pid + ` 2>&1 | sed 's/^.*: /KILLHOST: /'`,
			`kill -0 -1 2>&1 | sed 's/^.*: /KILLALL: /'`,
			`python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print("SHM", l.shmget(0, 4096, 0o1600), ctypes.get_errno())'`,
		}, "; "))
		expect(t, r, 0, "WRITE-EXISTING-ok", "WRITE-SUBDIR-ok", "CREATE-TOP-ok", "BASHRC-refused", "OUTSIDE-refused",
			"SECRET: cat: "+w.path("home/secret/key")+": Permission denied", "TMPDIR-ok", "TMPMODE 700",
			"UDP: PermissionError: [Errno 1] Operation not permitted", "TCP: PermissionError: [Errno 13] Permission denied",
			"BIND: PermissionError: [Errno 13] Permission denied", "KILLHOST: ("+pid+") - Operation not permitted", "KILLALL: (-1) - Operation not permitted",
			"SHM -1 1", "!SECRET: SECRET")
		if got, _ := os.ReadFile(w.path("home/proj/existing.txt")); string(got) != "new\n" {
			t.Errorf("existing.txt holds %q", got)
		}
		if exists(w.path("outside")) {
			t.Error("ESCAPE: a refused write left a file")
		}
		if !exists(w.path("home/proj/top-new")) {
			t.Error("the new file at the top of the working directory is not there")
		}
		if !processAlive(marker.Process.Pid) {
			t.Fatal("ESCAPE: the host process died")
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if p, ok := strings.CutPrefix(l, "TMPPATH "); ok {
				if exists(p) {
					t.Errorf("the private TMPDIR %s is left after the run", p)
				}
				if filepath.Base(filepath.Dir(p)) == "" || !strings.HasPrefix(filepath.Base(p), "tmp-") {
					t.Errorf("TMPDIR %s is not srt's", p)
				}
			}
		}
		if n := strings.Count(r.stderr, "srt: warning: srt runs the command under its Landlock backend"); n != 1 {
			t.Errorf("want one announcement line, got %d:\n%s", n, r.stderr)
		}
	})
}

// TestLandlockRootRefused: as uid 0 the backend refuses to run unless
// allowWeaker names root (Landlock does not cover chmod).
func TestLandlockRootRefused(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid != 0 {
			return
		}
		r := w.srt("--backend", "landlock", "-s", w.settings(fsSettings(`{"allowWrite":[],"denyWrite":[],"denyRead":[]}`)), "-c", "echo RAN")
		expect(t, r, 1, "srt's Landlock backend cannot keep a command run as uid 0 from changing the mode", "--allow-weaker=root", "!RAN")
	})
}

// TestLandlockAutoWithoutBubblewrap: under "auto", where bubblewrap is not
// installed (bwrapPath naming nothing), srt runs the command under the
// Landlock backend, says so in one line, and enforces the rules;
// --backend bubblewrap refuses.
func TestLandlockAutoWithoutBubblewrap(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if testBackend != "" {
			t.Skip("the backend is forced (SRT_TEST_BACKEND): this test is of \"auto\"")
		}
		nowhere := w.path("no-bwrap")
		w.mkdir("home/proj/out")
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["out"],"denyWrite":[],"denyRead":[]},"bwrapPath":"` + nowhere + `"}`)
		var weaker []string
		if w.r.uid == 0 {
			weaker = []string{"--allow-weaker=root"}
		}
		r := w.srt(append(weaker, "-s", s, "-c", `echo in > out/in.txt && echo IN-ok; echo out > `+w.path("out")+` 2>&1`)...)
		expect(t, r, 1, "IN-ok", w.path("out")+": Read-only file system")
		lines := strings.Count(r.stderr, "so srt runs the command under its Landlock backend")
		if lines != 1 || !strings.Contains(r.stderr, "srt: warning: bubblewrap cannot be used (bubblewrap (bwrapPath "+nowhere+") cannot be used") {
			t.Errorf("want one announcement naming the missing bubblewrap, got:\n%s", r.stderr)
		}
		if exists(w.path("out")) {
			t.Error("ESCAPE: a write outside allowWrite went through")
		}
		r = w.srt("--backend", "bubblewrap", "-s", s, "-c", "echo RAN")
		expect(t, r, 1, "srt: bubblewrap (bwrapPath "+nowhere+") cannot be used", "!RAN")
	})
}

// TestLandlockNested: srt inside an srt sandbox (as the unprivileged
// user, who cannot make user namespaces there) picks the Landlock backend
// by itself and enforces its own, narrower rules: its denyRead hides a
// file the outer sandbox lets it read, its allowWrite keeps it from
// writing where the outer one lets it; and the outer rules still hold
// where the inner ones are wider (a denyRead of the outer, an allowWrite
// of the inner outside the outer's).
func TestLandlockNested(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid == 0 {
			return // as root the inner run would need --allow-weaker=root: the user's run is the case
		}
		w.mkdir("home/proj/inner")
		w.mkdir("home/wide")
		w.mkdir("home/proj/out") // (a subdirectory: the Landlock backend's outer run cannot create entries at the top)
		innerSecret := w.write("home/proj/inner-secret.txt", "INNER-ONLY-SECRET\n")
		outerSecret := w.write("home/outer-secret.txt", "OUTER-SECRET\n")
		inner := w.write("inner.json", fsSettings(`{"allowWrite":["`+w.path("home/proj/inner")+`","`+w.path("home/wide")+`"],"denyWrite":[],"denyRead":["`+innerSecret+`"]}`))
		outer := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":["` + outerSecret + `"]}`)
		srt := filepath.Join(bin, "srt")
		r := w.sh(outer, srt+` -s `+inner+` -c '`+strings.Join([]string{
			`echo a > inner/a && echo INNER-WRITE-ok`,
			`echo b > out/inner-o 2>/dev/null || echo INNER-NARROWER-WRITE-refused`,
			`cat ` + innerSecret + ` 2>&1 | sed "s/^/INNER-READ: /"`,
			`cat ` + outerSecret + ` 2>&1 | sed "s/^/OUTER-DENY: /"`,
			`echo c > ` + w.path("home/wide/x") + ` 2>/dev/null || echo OUTER-WRITE-HOLDS`,
		}, "; ")+`' 2>&1; cat `+innerSecret+` | sed "s/^/OUTER-READ: /"; echo d > out/outer-ok && echo OUTER-WRITE-ok`)
		expect(t, r, 0, "bubblewrap cannot make a sandbox here", "srt runs the command under its Landlock backend",
			"INNER-WRITE-ok", "INNER-NARROWER-WRITE-refused", "INNER-READ: cat: "+innerSecret+": Permission denied", "!INNER-READ: INNER-ONLY-SECRET",
			"OUTER-DENY: cat: "+outerSecret+": ", "!OUTER-SECRET", "OUTER-WRITE-HOLDS",
			"OUTER-READ: INNER-ONLY-SECRET", "OUTER-WRITE-ok")
		if exists(w.path("home/proj/out/inner-o")) || exists(w.path("home/wide/x")) {
			t.Error("ESCAPE: the nested sandbox wrote outside its own or the outer allowWrite")
		}
		if !exists(w.path("home/proj/inner/a")) || !exists(w.path("home/proj/out/outer-ok")) {
			t.Error("the allowed writes did not reach the host")
		}
	})
}

// On a kernel without Landlock (SRT_TEST_NO_LANDLOCK_KERNEL: scripts/test-uml
// runs one), the Landlock backend refuses to run, naming the kernel
// feature, and nothing runs; "requireLandlock" makes the bubblewrap
// backend refuse too; without it bubblewrap runs, warning once.
func TestNoLandlockKernel(t *testing.T) {
	if os.Getenv("SRT_TEST_NO_LANDLOCK_KERNEL") == "" {
		t.Skip("needs a kernel without Landlock (SRT_TEST_NO_LANDLOCK_KERNEL): scripts/test-uml runs it")
	}
	if b, _ := os.ReadFile("/sys/kernel/security/lsm"); strings.Contains(string(b), "landlock") {
		t.Fatalf("SRT_TEST_NO_LANDLOCK_KERNEL, but this kernel has Landlock: %s", b)
	}
	forEach(t, func(t *testing.T, w *workspace) {
		s := limitsSettings(w, `{}`)
		cmd := exec.Command(filepath.Join(bin, "srt"), "--backend", "landlock", "--allow-weaker=root", "-s", s, "-c", "touch ran")
		cmd.Dir, cmd.Env = w.dir, w.env()
		cmd.SysProcAttr = w.command(nil).SysProcAttr
		r := w.run(cmd)
		if r.code == 0 || !strings.Contains(r.stderr, "this kernel has none") || !strings.Contains(r.stderr, "CONFIG_SECURITY_LANDLOCK") {
			t.Fatalf("--backend landlock without Landlock\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "ran")); err == nil {
			t.Fatal("the command ran although its backend was refused")
		}
		r = w.srt("-s", w.write("require.json", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"requireLandlock":true}`), "-c", "touch ran")
		if r.code == 0 || !strings.Contains(r.stderr, "requireLandlock") {
			t.Fatalf("requireLandlock without Landlock\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(w.dir, "ran")); err == nil {
			t.Fatal("the command ran although requireLandlock was refused")
		}
		r = w.srt("-s", s, "-c", "echo ran")
		if r.code != 0 || r.stdout != "ran\n" || strings.Count(r.stderr, "this kernel has no Landlock") != 1 {
			t.Fatalf("bubblewrap without Landlock\n%s", r)
		}
	})
}
