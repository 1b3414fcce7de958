//go:build linux

package sandbox

import (
	"errors"

	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/hostexec"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// Errors callers can branch on with errors.Is.
var (
	// ErrInvalidConfig: the settings cannot be used.
	ErrInvalidConfig = settings.ErrInvalid
	// ErrMissingDependency: a program srt needs (bubblewrap, the shell,
	// decider, srt-proxy) is missing, too old or broken. The message names
	// the program and the fix.
	ErrMissingDependency = hostexec.ErrMissing
	// ErrCannotSandbox: this machine or container does not let bubblewrap
	// build a sandbox (user namespaces disabled, AppArmor, capabilities).
	ErrCannotSandbox = bwrap.ErrCannotSandbox
	// ErrUntrustedProgram: srt will not run a program it needs
	// (bubblewrap, srt-init, srt-proxy, decider) because another user, or
	// a command in the sandbox at hand, could have put it where srt found
	// it or changed it. The message names the file and the fix.
	ErrUntrustedProgram = hostexec.ErrUntrusted
	// ErrTooManyMounts: the filesystem rules need more mounts than srt
	// allows, and not beneath allowWrite (there srt hides the directory
	// holding them whole, and warns).
	ErrTooManyMounts = plan.ErrTooManyMounts
	// ErrGlobTooBroad: a deny pattern would need too large a walk to
	// expand fully, and not beneath allowWrite (there srt hides the
	// directory that filled it whole, and warns).
	ErrGlobTooBroad = plan.ErrGlobTooBroad
	// ErrPathChanged: a path the plan grants changed (it became a symlink,
	// or another file took its name) between the plan and the mount.
	ErrPathChanged = plan.ErrPathChanged
	// ErrClosed: the manager was closed.
	ErrClosed = errors.New("sandbox: manager closed")
)
