//go:build linux

package e2e

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/srt-sandbox/srt/internal/landlock"
)

// TestLayersReport checks what srt says about the layers on this kernel
// against what the kernel says itself (landlock_create_ruleset's version),
// and that requireLandlock is accepted, reaches the init stage and still
// runs the command where the kernel has Landlock. The decision on a kernel
// without Landlock (the warning on every run, requireLandlock's refusal)
// is tested in srt/sandbox (TestLayerDecision, TestCommandWithoutLandlock):
// Landlock cannot be taken away from this kernel, and srt has no switch
// that pretends it away.
func TestLayersReport(t *testing.T) {
	skipOnLandlock(t)
	abi, kerr := landlock.ABI()
	forEach(t, func(t *testing.T, w *workspace) {
		plain := fsSettings(writeCwd)
		required := withTop(plain, `"requireLandlock":true`)
		r := w.srt("-d", "-s", w.settings(plain), "-c", "true")
		if kerr != nil {
			expect(t, r, 0, "srt: debug: layers: ", "no Landlock", "srt: warning: this kernel has no Landlock", `"requireLandlock": true`)
			expect(t, w.srt("-s", w.settings(required), "-c", "echo ran"), 1, "srt: requireLandlock is set, and this kernel has no Landlock", "!ran")
			return
		}
		expect(t, r, 0, fmt.Sprintf("srt: debug: layers: user, mount, PID, IPC and network namespaces; seccomp %s: terminal injection, filter 1 (Unix sockets), filter 2 (namespaces, mounts); Landlock ABI %d: writing, creating and removing files and directories", runtime.GOARCH, abi),
			fmt.Sprintf("srt: debug: init: Landlock ABI %d: writes allowed only beneath", abi), "!no Landlock", "!srt: warning")
		// Without -d: nothing said.
		expect(t, w.srt("-s", w.settings(plain), "-c", "true"), 0, "!srt:")
		expect(t, w.srt("-d", "-s", w.settings(required), "-c", "echo ran"), 0, "ran\n",
			fmt.Sprintf("srt: debug: init: Landlock ABI %d: writes allowed only beneath", abi), "!srt: warning")
		// requireLandlock beside a setting that turns Landlock's write
		// limit off is a settings error.
		expect(t, w.srt("-s", w.settings(withTop(required, `"allowNestedUserNamespaces":true`)), "-c", "echo ran"), 1,
			"requireLandlock: cannot hold with allowNestedUserNamespaces", "!ran\n")
		if w.r.uid == 0 {
			return // refused allowNestedUserNamespaces
		}
		// allowNestedUserNamespaces keeps only Landlock's scope (ABI 6+).
		scope := fmt.Sprintf("Landlock ABI %d: connecting to abstract Unix sockets bound outside\n", abi)
		if abi < 6 {
			scope = fmt.Sprintf("Landlock ABI %d, not applied\n", abi)
		}
		nested := withTop(plain, `"allowNestedUserNamespaces":true`)
		expect(t, w.srt("-d", "-s", w.settings(nested), "-c", "true"), 0,
			fmt.Sprintf("seccomp %s: terminal injection, filter 1 (Unix sockets); %s", runtime.GOARCH, scope),
			"writes are not limited by Landlock (allowNestedUserNamespaces)", "srt: warning: "+nestedWarning)
	})
}
