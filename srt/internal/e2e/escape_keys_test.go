//go:build linux

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEscapeSessionKeyring looks for a secret in the kernel session keyring
// srt was started with. Keyrings are not files, so no mount hides them, and
// a process keeps its session keyring across fork, exec and new namespaces
// unless it joins another: bubblewrap does not, and the command can read
// every key the caller's session holds (Kerberos tickets in a KEYRING
// cache, tokens a tool stored there). A fresh session keyring inside would
// make the search fail (ENOKEY).
func TestEscapeSessionKeyring(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const secret = "KEYRING-SECRET-5e11"
		run := func(args ...string) probeRun {
			t.Helper()
			cmd := exec.Command(probeBin(t), append([]string{"with-key", "srt-escape-key", secret}, args...)...)
			cmd.Dir, cmd.Env = w.dir, w.env()
			w.asRunner(cmd)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				if _, ok := err.(*exec.ExitError); !ok {
					t.Fatal(err)
				}
			}
			return newProbeRun(result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()})
		}
		p := run(filepath.Join(bin, "srt"), "-s", w.settings(fsSettings(writeCwd)), "--", probeBin(t), "keyring", "srt-escape-key")
		if p.code != 0 || strings.Contains(p.stdout, secret) || p.steps["key-search"] == "ok" {
			t.Errorf("ESCAPE: the sandbox read a key from the caller's session keyring\n%s", p.result)
		}
		// Control: outside the sandbox the probe finds and reads the key.
		want(t, run(probeBin(t), "keyring", "srt-escape-key"), "key-search", "ok", "key-read", "ok")
	})
}
