package initstage

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/landlock"
	"github.com/srt-sandbox/srt/internal/seccomp"
)

// restrict applies the spec to this process, on every thread: no_new_privs,
// then Landlock, then seccomp (last, so that the calls the first two need
// are not filtered). Any failure is fatal: the command never runs with less
// than it was promised. The one exception is a kernel without Landlock,
// which is said on the debug output (srt warned on the host already; the
// mount rules still hold there), unless requireLandlock makes it fatal.
func restrict(spec Spec) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	// A new, empty session keyring: the caller's (Kerberos ticket caches,
	// tool tokens) is inherited otherwise, and keyrings are not files that
	// a mount could hide. The seccomp filter below refuses every keyring
	// call anyway (the caller's user keyring is found by uid, which no new
	// session keyring hides); this keeps the session keyring away on an
	// architecture srt has no filter for.
	// Credentials are per thread: this thread (locked by run, and the one
	// that starts the command) joins the new keyring, and the command
	// inherits it.
	// Inside another srt sandbox (a nested srt) keyctl is already refused
	// (EPERM) by the outer filter, which this one inherits, so the command
	// can reach no keyring either way; the filter below refuses it again.
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		if _, filtered := seccomp.Native(); !filtered || errno != unix.EPERM && errno != unix.ENOSYS {
			return fmt.Errorf("new session keyring: %w", errno)
		}
		debug("no new session keyring (%v): keyrings are refused already, and the seccomp filter refuses them to the command", errno)
	}
	if spec.NoNS.On {
		if err := restrictNoNS(spec.NoNS); err != nil {
			return err
		}
	} else if spec.Landlock {
		// No signal scoping: Landlock gives each thread of this process a
		// domain of its own, so a signal this process forwards from another
		// thread than the one that started the command would be refused;
		// the PID namespace already hides every process outside.
		// Only this thread: it is locked and starts the command, which
		// inherits the domain; the init stage's other threads run only its
		// own code (and every thread gets the seccomp filter below).
		// With LandlockScopeOnly mounts stay possible
		// (allowNestedUserNamespaces).
		abi, skipped, err := landlock.Restrict(landlock.Rules{WritePaths: spec.WritePaths, ScopeAbstractUnix: true,
			ScopesOnly: spec.LandlockScopeOnly, ThisThread: true})
		switch {
		case errors.Is(err, landlock.ErrUnsupported) && spec.RequireLandlock:
			return fmt.Errorf("requireLandlock is set, and %w", err)
		case errors.Is(err, landlock.ErrUnsupported):
			debug("Landlock is not available on this kernel (%v); writes are limited by the mount rules alone", err)
		case err != nil:
			return fmt.Errorf("landlock: %w", err)
		case spec.LandlockScopeOnly:
			debug("Landlock ABI %d: abstract Unix sockets scoped (from ABI 6); writes are not limited by Landlock (allowNestedUserNamespaces)", abi)
		default:
			debug("Landlock ABI %d: writes allowed only beneath %s", abi, strings.Join(spec.WritePaths, ", "))
			if len(skipped) > 0 {
				debug("Landlock: write roots that do not exist inside: %s", strings.Join(skipped, ", "))
			}
		}
	}
	// Terminal input injection (TIOCSTI, TIOCLINUX), the keyrings and
	// set-id files are refused always, so there is always a filter where
	// the architecture has one.
	if arch, ok := seccomp.Native(); ok {
		prog, err := seccomp.Build(arch, seccomp.Options{BlockUnixSockets: spec.BlockUnixSockets, SuperviseUnixSockets: !spec.BlockUnixSockets && len(spec.UnixSockets) > 0,
			BlockNamespaces: spec.BlockNamespaces, BlockTerminalInjection: true, BlockKeyrings: true, BlockSetID: true})
		if err != nil {
			return err
		}
		if err := seccomp.Install(prog); err != nil {
			return err
		}
		if err := installNoNSFilter(arch, spec.NoNS); err != nil {
			return err
		}
		if err := supervise(arch, spec); err != nil {
			return err
		}
	} else if spec.BlockUnixSockets || spec.BlockNamespaces || len(spec.UnixSockets) > 0 {
		return errors.New("seccomp: this architecture has no filter")
	}
	return nil
}

func debug(format string, args ...any) {
	if os.Getenv("SRT_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "srt: debug: init: "+format+"\n", args...)
	}
}
