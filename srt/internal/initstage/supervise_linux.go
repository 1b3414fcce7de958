package initstage

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/unixgate"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// supervisor is the init stage's one seccomp user-notification server:
// the kernel allows one listener per chain of filters, so every feature
// that supervises calls registers its handlers on it (see usernotif)
// before startSupervisor installs the filter.
var supervisor usernotif.Server

// superviseUnixSockets registers the gate of network.allowUnixSockets and
// starts the supervisor.
func superviseUnixSockets(arch seccomp.Arch, allowed []string) error {
	gate := &unixgate.Gate{Allowed: allowed, Report: reportViolation}
	if err := gate.Register(&supervisor); err != nil {
		return err
	}
	return startSupervisor(arch)
}

// startSupervisor installs the notifying filter on this thread (locked by
// run: the one that starts the command, which inherits the filter; the
// init stage's other threads, where the handlers run, stay outside it) and
// serves its notifications.
func startSupervisor(arch seccomp.Arch) error {
	prog, err := seccomp.BuildNotify(arch, supervisor.Calls())
	if err != nil {
		return err
	}
	listener, err := seccomp.InstallListener(prog)
	if errors.Is(err, seccomp.ErrListenerTaken) {
		return fmt.Errorf("network.allowUnixSockets: %w; inside it, leave allowUnixSockets empty (the outer sandbox's list still applies) or set allowAllUnixSockets", err)
	}
	if err != nil {
		return err
	}
	go func() {
		if err := supervisor.Serve(listener); err != nil {
			debug("supervisor: %v", err)
		}
		// Calls waiting now fail (ENOSYS) rather than hang.
		unix.Close(listener)
	}()
	return nil
}
