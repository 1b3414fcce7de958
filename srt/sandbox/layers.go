//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/landlock"
	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/settings"
)

// Layers says which of the sandbox's layers a command gets on this machine
// (docs/security.md, "Layers, and what each stops").
type Layers struct {
	// Backend is settings.BackendBubblewrap or settings.BackendLandlock
	// (docs/security.md, "The Landlock backend").
	Backend string
	// UserNamespace is true under bubblewrap, which runs nothing without
	// its user, mount, PID, IPC and network namespaces and its mount
	// rules; false under the Landlock backend, which has none.
	UserNamespace bool
	// Seccomp is the architecture of the seccomp filter programs ("amd64",
	// "arm64"); "" where srt has none (it then runs only when the settings
	// opt out of both filters).
	Seccomp string
	// UnixSocketFilter is seccomp filter 1 (off under
	// network.allowAllUnixSockets); NamespaceFilter is filter 2 (off under
	// allowNestedUserNamespaces).
	UnixSocketFilter, NamespaceFilter bool
	// LandlockABI is the kernel's Landlock ABI version, 0 when it has none;
	// LandlockUnavailable then says why.
	LandlockABI         int
	LandlockUnavailable error
	// LandlockWrites: Landlock limits writes to the write roots, the
	// second write barrier (off without Landlock, under
	// filesystem.disabled and under allowNestedUserNamespaces).
	LandlockWrites bool
	// LandlockCovers lists what Landlock refuses to the command, which
	// grows with the ABI; empty when Landlock does not apply.
	LandlockCovers []string
}

// String is a one-line summary, as srt's debug output prints it.
func (l Layers) String() string {
	parts := []string{"user, mount, PID, IPC and network namespaces"}
	if !l.UserNamespace {
		parts = []string{"Landlock backend: no namespaces"}
	}
	if l.Seccomp == "" {
		parts = append(parts, "no seccomp filter (no program for this architecture)")
	} else {
		f := []string{"terminal injection"}
		if l.UnixSocketFilter {
			f = append(f, "filter 1 (Unix sockets)")
		}
		if l.NamespaceFilter {
			f = append(f, "filter 2 (namespaces, mounts)")
		}
		parts = append(parts, "seccomp "+l.Seccomp+": "+strings.Join(f, ", "))
	}
	switch {
	case l.LandlockABI == 0:
		parts = append(parts, fmt.Sprintf("no Landlock (%v)", l.LandlockUnavailable))
	case len(l.LandlockCovers) == 0:
		parts = append(parts, fmt.Sprintf("Landlock ABI %d, not applied", l.LandlockABI))
	default:
		parts = append(parts, fmt.Sprintf("Landlock ABI %d: %s", l.LandlockABI, strings.Join(l.LandlockCovers, ", ")))
	}
	return strings.Join(parts, "; ")
}

// kernelLayers is what the running kernel gives, asked on the host once,
// before anything starts: the init stage runs on the same kernel.
type kernelLayers struct {
	seccompArch string // "" where srt has no filter program
	seccompErr  error  // the kernel installs no filters
	landlockABI int    // 0: no Landlock
	landlockErr error  // why there is no Landlock
}

func probeKernel() kernelLayers {
	var k kernelLayers
	if arch, ok := seccomp.Native(); ok {
		k.seccompArch = arch.String()
		k.seccompErr = seccomp.KernelHasFilters()
	}
	k.landlockABI, k.landlockErr = landlock.ABI()
	return k
}

// layersFor is what a command under cfg gets from kernel k.
func layersFor(cfg *settings.Config, k kernelLayers) Layers {
	l := Layers{
		UserNamespace:       true,
		Seccomp:             k.seccompArch,
		UnixSocketFilter:    k.seccompArch != "" && !cfg.Network.AllowAllUnixSockets,
		NamespaceFilter:     k.seccompArch != "" && !cfg.AllowNestedUserNamespaces,
		LandlockABI:         k.landlockABI,
		LandlockUnavailable: k.landlockErr,
	}
	if k.landlockABI > 0 && !cfg.Filesystem.Disabled {
		l.LandlockWrites = !cfg.AllowNestedUserNamespaces
		l.LandlockCovers = landlock.Covers(k.landlockABI, l.LandlockWrites)
	}
	return l
}

// checkLayers refuses what cannot be built as cfg asks, for the user uid,
// on kernel k.
func checkLayers(cfg *settings.Config, k kernelLayers, uid int) error {
	if k.seccompArch != "" && k.seccompErr != nil {
		return fmt.Errorf("%w; srt needs seccomp filters for its sandbox: %w", k.seccompErr, ErrCannotSandbox)
	}
	if uid == 0 && cfg.AllowNestedUserNamespaces {
		return fmt.Errorf("allowNestedUserNamespaces cannot work when srt runs as uid 0: bubblewrap, unshare -r and rootless containers map uid 0 into their user namespace, which needs CAP_SETFCAP, and the sandbox drops it (with it, root inside could give files capabilities the host honours); run srt as a regular user for nested sandboxes, or turn allowNestedUserNamespaces off (the library's WithNestedUserNamespaces(true) is refused the same way): %w", ErrInvalidConfig)
	}
	if !cfg.RequireLandlock {
		return nil
	}
	switch {
	case cfg.AllowNestedUserNamespaces:
		return fmt.Errorf("requireLandlock cannot hold with allowNestedUserNamespaces (or the library's WithNestedUserNamespaces(true)), which turns Landlock's write limit off; remove one of the two: %w", ErrInvalidConfig)
	case cfg.Filesystem.Disabled:
		return fmt.Errorf("requireLandlock cannot hold with filesystem.disabled (or the library's WithFilesystem with Disabled), under which srt applies no Landlock; remove one of the two: %w", ErrInvalidConfig)
	case k.landlockABI == 0:
		return fmt.Errorf("requireLandlock is set, and this kernel has no Landlock (%v), so srt will not run a command without Landlock's write limit; %s, or remove requireLandlock to run with the mount rules alone: %w",
			k.landlockErr, landlockHint(k.landlockErr), ErrCannotSandbox)
	}
	return nil
}

// layerWarnings are said on every run: what the command goes without.
func layerWarnings(cfg *settings.Config, k kernelLayers) []string {
	if cfg.Filesystem.Disabled {
		return nil // no filesystem rule at all, which the user asked for
	}
	if cfg.AllowNestedUserNamespaces {
		return []string{"allowNestedUserNamespaces is on, so Landlock's write limit is off (a nested sandbox must change mounts, which Landlock forbids): writes outside allowWrite are refused by the read-only mounts alone, which the kernel keeps locked in every namespace the command makes"}
	}
	if k.landlockABI == 0 {
		return []string{fmt.Sprintf("this kernel has no Landlock (%v), so srt's second write barrier is missing: writes outside allowWrite are refused by the read-only mounts alone, with nothing behind them if a mount rule is undone or wrong; %s, or set \"requireLandlock\": true in the settings to refuse to run without it", k.landlockErr, landlockHint(k.landlockErr))}
	}
	return nil
}

// landlockHint says how to get Landlock, from the kernel's answer.
func landlockHint(err error) string {
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return "Landlock is built into this kernel but not enabled: add landlock to the lsm= kernel parameter"
	case errors.Is(err, unix.ENOSYS):
		return "Landlock needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK"
	}
	return "use a kernel with Landlock"
}

// Layers reports the layers a command wrapped now would get on this
// machine, with the command options opts applied as Command applies them
// (WithFilesystem, WithNestedUserNamespaces). It does not say whether
// Command would refuse the configuration: Command does.
func (m *Manager) Layers(opts ...CommandOption) Layers {
	var o commandOptions
	for _, f := range opts {
		f(&o)
	}
	l := layersFor(o.config(m.Config()), m.kernel)
	l.Backend, l.UserNamespace = m.backend, m.backend != settings.BackendLandlock
	return l
}
