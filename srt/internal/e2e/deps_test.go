//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestMissingBubblewrap(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		// A PATH with bash but without bwrap.
		pathDir := w.mkdir("path")
		bash, _ := exec.LookPath("bash")
		os.Symlink(bash, filepath.Join(pathDir, "bash"))
		// "bubblewrap" refuses; "auto" runs the Landlock backend instead
		// (as root only with its opt-in, or it names both refusals).
		bw := []string{"--backend", "bubblewrap"}
		r := w.srtEnv([]string{"PATH=" + pathDir}, append(bw, "true")...)
		expect(t, r, 1, "srt: bubblewrap (bwrap) is not installed or not on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap")
		r = w.srtEnv([]string{"PATH=" + pathDir}, "--backend", "auto", "-c", "echo RAN")
		if w.r.uid == 0 && testBackend != "landlock" { // (the suite's forced backend adds the opt-in)
			expect(t, r, 1, "srt: srt has no backend that can run here: bubblewrap cannot (bubblewrap (bwrap) is not installed or not on PATH; install it",
				"and its Landlock backend cannot either (srt's Landlock backend cannot keep a command run as uid 0", "--allow-weaker=root",
				"install bubblewrap where user namespaces are allowed (scripts/install", "or do what the Landlock backend's refusal says", "!RAN")
		} else {
			expect(t, r, 0, "RAN", "srt: warning: bubblewrap cannot be used (bubblewrap (bwrap) is not installed or not on PATH", "so srt runs the command under its Landlock backend")
		}
		s := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"bwrapPath":"/nonexistent/bwrap"}`
		expect(t, w.srt(append(bw, "-s", w.settings(s), "true")...), 1, "srt: bubblewrap (bwrapPath /nonexistent/bwrap) cannot be used")
		notExec := w.write("fake-bwrap", "#!/bin/sh\n")
		os.Chmod(notExec, 0o644)
		s = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"bwrapPath":"` + notExec + `"}`
		expect(t, w.srt(append(bw, "-s", w.settings(s), "true")...), 1, "is not executable at "+notExec)
		old := w.write("old-bwrap", "#!/bin/sh\necho 'bubblewrap 0.4.1'\n")
		os.Chmod(old, 0o755)
		s = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"bwrapPath":"` + old + `"}`
		expect(t, w.srt(append(bw, "-s", w.settings(s), "true")...), 1, "bubblewrap 0.4.1 at "+old+" is older than 0.5.0")
	})
}

// TestRootWithoutSetfcap: root whose bounding set lacks CAP_SETFCAP cannot
// map uid 0 into the sandbox's user namespace; srt says so up front.
func TestRootWithoutSetfcap(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the check is about root's capability bounding set")
	}
	capsh, err := exec.LookPath("capsh")
	if err != nil {
		t.Fatalf("capsh is needed for this test (Debian: libcap2-bin): %v", err)
	}
	w := newWorkspace(t, runner{name: "root"})
	cmd := exec.Command(capsh, "--drop=cap_setfcap", "--", "-c", filepath.Join(bin, "srt")+" true")
	cmd.Dir, cmd.Env = w.dir, w.env()
	out, _ := cmd.CombinedOutput()
	r := result{stdout: string(out), code: cmd.ProcessState.ExitCode()}
	expect(t, r, 1, "running as uid 0 without CAP_SETFCAP in this process's capability bounding set", "Grant CAP_SETFCAP to this process, or run as a non-root user")
}

// TestUserNamespacesDisabled: with user.max_user_namespaces at 0 (here in a
// user namespace of the test's own, whose limit it may lower) bubblewrap
// cannot work; srt says so and how to fix it, and runs nothing.
func TestUserNamespacesDisabled(t *testing.T) {
	w := newWorkspace(t, runner{name: "root"})
	marker := filepath.Join(w.dir, "ran")
	script := "echo 0 > /proc/sys/user/max_user_namespaces && exec " + filepath.Join(bin, "srt") + " touch " + marker
	cmd := exec.Command("unshare", "--user", "--map-root-user", "sh", "-c", script)
	cmd.Dir, cmd.Env = w.dir, w.env()
	out, _ := cmd.CombinedOutput()
	r := result{stdout: string(out), code: cmd.ProcessState.ExitCode()}
	expect(t, r, 1, "user namespaces are disabled on this machine (user.max_user_namespaces = 0), and bubblewrap needs them; enable them with `sysctl -w user.max_user_namespaces=15000`")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

// TestMissingNetworkProgram: a missing decider or srt-proxy is named as
// such, not taken for bubblewrap.
func TestMissingNetworkProgram(t *testing.T) {
	for _, missing := range []string{"decider", "srt-proxy"} {
		t.Run(missing, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "srt-e2e-missing-")
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o755) // the unprivileged runner runs srt from it
			t.Cleanup(func() { os.RemoveAll(dir) })
			for _, name := range []string{"srt", "srt-init", "decider", "srt-proxy"} {
				if name == missing {
					continue
				}
				if err := copyFile(filepath.Join(bin, name), filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			forEach(t, func(t *testing.T, w *workspace) {
				// The connection is refused at once, not left waiting in a
				// backlog nobody serves (curl -m would end it with 28).
				cmd := w.command(nil, "-s", w.settings(netSettings(nil, nil, "")), "-c", resetFn+`curl -sS -m 20 http://example.test/; echo "curl=$(reset $?)"`)
				cmd.Path = filepath.Join(dir, "srt")
				expect(t, w.run(cmd), 0, "srt: the network proxy could not start, so the sandbox has no network: the network proxy needs "+missing+", installed beside srt or on PATH", "!bubblewrap", "curl=reset")
			})
		})
	}
}
