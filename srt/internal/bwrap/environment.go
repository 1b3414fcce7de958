//go:build linux

package bwrap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrCannotSandbox is matched by errors saying that this machine or
// container does not let bubblewrap build a sandbox.
var ErrCannotSandbox = errors.New("environment cannot sandbox")

// CheckEnvironment looks for the settings that stop bubblewrap from
// creating namespaces, without running anything. It is cheap enough to run
// every time.
func CheckEnvironment() error {
	if v, ok := readInt("/proc/sys/user/max_user_namespaces"); ok && v == 0 {
		return fmt.Errorf("user namespaces are disabled on this machine (user.max_user_namespaces = 0), and bubblewrap needs them; enable them with `sysctl -w user.max_user_namespaces=15000`: %w", ErrCannotSandbox)
	}
	if os.Geteuid() != 0 {
		if v, ok := readInt("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == 0 {
			return fmt.Errorf("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0), and bubblewrap needs them; enable them with `sysctl -w kernel.unprivileged_userns_clone=1`: %w", ErrCannotSandbox)
		}
		return nil
	}
	// Root maps uid 0 into the sandbox's user namespace, which kernels since
	// 5.12 allow only with CAP_SETFCAP.
	if !inBoundingSet(unix.CAP_SETFCAP) {
		return fmt.Errorf("running as uid 0 without CAP_SETFCAP in this process's capability bounding set - on kernels that enforce the CAP_SETFCAP requirement for mapping uid 0 into a user namespace (Linux 5.12 and distribution backports) every sandboxed command fails while writing a uid map (\"Operation not permitted\"). Grant CAP_SETFCAP to this process, or run as a non-root user: %w", ErrCannotSandbox)
	}
	return nil
}

// Diagnose explains why bubblewrap failed to start a sandbox, after it has.
// It runs a minimal sandbox and reports what bubblewrap says, with the fix
// for the causes srt knows.
func Diagnose(info Info) error {
	if err := CheckEnvironment(); err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(info.Path, "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "true")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		return nil
	}
	msg := strings.TrimSpace(stderr.String())
	hint := ""
	switch {
	case fileHas("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"):
		hint = "; AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1): allow bubblewrap with an AppArmor profile, or run `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`"
	case strings.Contains(msg, "proc"):
		hint = "; this looks like a container that cannot mount a fresh /proc: set enableWeakerNestedSandbox (it weakens isolation), or run srt outside the container"
	case strings.Contains(msg, "Operation not permitted") || strings.Contains(msg, "No space left"):
		hint = "; this machine or container does not allow creating user namespaces (a container without them, or a seccomp profile that blocks them)"
	}
	return fmt.Errorf("bubblewrap cannot create a sandbox here (%s)%s: %w", msg, hint, ErrCannotSandbox)
}

func readInt(p string) (int, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	var v int
	_, err = fmt.Sscanf(strings.TrimSpace(string(data)), "%d", &v)
	return v, err == nil
}

func fileHas(p, want string) bool {
	data, err := os.ReadFile(p)
	return err == nil && strings.TrimSpace(string(data)) == want
}

func inBoundingSet(capability int) bool {
	r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(capability), 0, 0, 0)
	return err == nil && r == 1
}
