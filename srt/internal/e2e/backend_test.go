//go:build linux

package e2e

import "os"

// testBackend is the backend the suite runs srt with: SRT_TEST_BACKEND
// ("landlock", "bubblewrap"; unset: srt's own choice). scripts/test runs
// the filesystem rule tests and the escape suite with it set to landlock.
var testBackend = os.Getenv("SRT_TEST_BACKEND")

// backendArgs are the flags that select testBackend.
func backendArgs() []string {
	if testBackend == "" {
		return nil
	}
	if testBackend == "landlock" && os.Geteuid() == 0 {
		// As root the backend refuses to run unless told it may leave
		// root's chmod unchecked (docs/security.md): the escape table
		// names what that costs.
		return []string{"--backend", testBackend, "--allow-weaker=root"}
	}
	return []string{"--backend", testBackend}
}
