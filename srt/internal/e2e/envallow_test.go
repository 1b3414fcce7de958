//go:build linux

package e2e

import "testing"

// TestEnvironmentAllow: under the environment block only the listed names
// and prefixes of the caller's environment reach the command; srt's own
// variables are set whatever the list says; credentials.envVars applies
// to what is left; without the block everything passes.
func TestEnvironmentAllow(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		env := []string{"CI_JOB_ID=42", "CI=yes", "CIRCLE=no", "KEEP=k", "KEEPER=no", "DROPPED=gone", "TOKEN=secret-token"}
		// The shell's own environment, as it was started (bash makes up
		// a PATH of its own when it has none).
		show := `e=$(tr '\0' '\n' < /proc/$$/environ); for v in PATH HOME CI_JOB_ID CI CIRCLE KEEP KEEPER DROPPED TOKEN SANDBOX_RUNTIME TMPDIR; do l=$(printf '%s\n' "$e" | grep "^$v=") || l="$v=UNSET"; printf '%s\n' "$l"; done; [ -n "$HTTP_PROXY" ] && echo PROXY-SET`
		block := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
			`"environment":{"allow":["PATH","CI_*","KEEP","TOKEN"]},"credentials":{"envVars":[{"name":"TOKEN","mode":"deny"}]}}`
		r := w.srtEnv(env, "-s", w.settings(block), "-c", show)
		expect(t, r, 0, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n", "HOME=UNSET\n", "CI_JOB_ID=42\n", "CI=UNSET\n", "CIRCLE=UNSET\n",
			"KEEP=k\n", "KEEPER=UNSET\n", "DROPPED=UNSET\n", "TOKEN=UNSET\n", "SANDBOX_RUNTIME=1\n", "PROXY-SET", "!secret-token")
		// An empty list passes nothing but srt's own.
		none := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"environment":{"allow":[]}}`
		r = w.srtEnv(env, "-s", w.settings(none), "-c", show)
		expect(t, r, 0, "PATH=UNSET\n", "CI_JOB_ID=UNSET\n", "KEEP=UNSET\n", "SANDBOX_RUNTIME=1\n", "PROXY-SET", "!TMPDIR=UNSET")
		// Without the block everything passes.
		r = w.srtEnv(env, "-s", w.settings(fsSettings(writeCwd)), "-c", show)
		expect(t, r, 0, "HOME="+w.home+"\n", "CI=yes\n", "CIRCLE=no\n", "DROPPED=gone\n", "TOKEN=secret-token\n")
		// A bad entry is a settings error naming it.
		bad := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"environment":{"allow":["*"]}}`
		r = w.srt("-s", w.settings(bad), "-c", "echo RAN")
		expect(t, r, 1, `environment.allow.0: "*" would allow every variable; remove the environment block to pass the whole environment through`, "!RAN")
	})
}
