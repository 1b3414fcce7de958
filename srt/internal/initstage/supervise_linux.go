package initstage

import (
	"errors"
	"fmt"
	"os"

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

// superviseUnixSockets registers the gate of network.allowUnixSockets;
// hostNetwork: the command has no network namespace (the Landlock
// backend).
func superviseUnixSockets(allowed []UnixSocket, hostNetwork bool, net *netGate) error {
	gate := &unixgate.Gate{Report: reportViolation, HostNetwork: hostNetwork, SkipConnect: net != nil, AsCommand: asCommand}
	if net != nil {
		net.unix = gate.ConnectOn
	}
	for _, u := range allowed {
		e := unixgate.Entry{Path: u.Path, Pinned: u.Pinned, Changed: u.Changed}
		if u.ID != nil {
			e.ID = &unixgate.FileID{Dev: u.ID.Dev, Ino: u.ID.Ino}
		}
		gate.Allowed = append(gate.Allowed, e)
	}
	return gate.Register(&supervisor)
}

// supervise registers what spec asks to supervise — the Unix socket gate,
// the filesystem observer (fsobserve_linux.go) — on the one supervisor,
// and starts it. The observer is diagnostic: when it cannot run, the
// command runs without it, and says so.
func supervise(arch seccomp.Arch, spec Spec) error {
	gate := !spec.BlockUnixSockets && len(spec.UnixSockets) > 0
	// The Landlock backend's connects and listens (netgate_linux.go).
	var net *netGate
	if spec.NoNS.On && spec.NoNS.InetTCPOnly {
		net = &netGate{allowed: spec.NoNS.ConnectTo, nested: spec.NoNS.NestedTo, report: reportViolation}
	}
	if gate {
		if err := superviseUnixSockets(spec.UnixSockets, spec.NoNS.On, net); err != nil {
			return err
		}
	} else if net != nil {
		// No list: the gate connects a Unix socket to any path, so that
		// no connect runs as the command made it (netgate_linux.go).
		net.unix = (&unixgate.Gate{Report: reportViolation, HostNetwork: true, AllowAll: true, AsCommand: asCommand}).ConnectOn
	}
	if net != nil {
		if err := net.register(&supervisor); err != nil {
			return err
		}
	}
	observe := false
	if spec.ObserveFD > 0 {
		if err := registerObserver(arch, spec); err != nil {
			fmt.Fprintf(os.Stderr, "srt: warning: filesystem violations are not reported for this command: %v\n", err)
		} else {
			observe = true
		}
	}
	// The chain supervisor only adds to what Landlock allows: without it
	// the command runs with Landlock's grants alone, and is told. The
	// read-only supervisor (rofs_linux.go) decides with what the chain
	// supervisor recorded: without it, writes Landlock refuses fail with
	// EACCES rather than EROFS, and metadata is not covered, which the
	// command is told.
	chains, readOnly := false, false
	if spec.NoNS.On {
		c, err := registerChains(arch, spec.NoNS.ChainFD)
		if err != nil {
			fmt.Fprintf(os.Stderr, "srt: warning: %s: %v\n", noChainsWarning, err)
			fmt.Fprintf(os.Stderr, "srt: warning: %s: %v\n", noReadOnlyWarning, err)
		} else {
			chains = len(c.w.dirs) > 0 || len(c.r.dirs) > 0
			if err := registerReadOnly(arch, c); err != nil {
				fmt.Fprintf(os.Stderr, "srt: warning: %s: %v\n", noReadOnlyWarning, err)
			} else {
				readOnly = true
			}
		}
	}
	if supervisor.Empty() {
		return nil
	}
	err := startSupervisor(arch, net)
	outer := net != nil && !gate && errors.Is(err, seccomp.ErrListenerTaken) && spec.NoNS.InOuter
	if outer {
		// An srt inside an srt Landlock sandbox (it took the outer's
		// spare listeners): the outer srt's supervisor performs the
		// command's connects and listens, and holds this command, whose
		// seccomp filters outnumber the outer command's, to the spare
		// listeners, where this srt's proxies serve (netGate).
		debug("supervisor: %v; the outer srt's checks the command's connects and listens", err)
	}
	if err != nil && !gate && (net == nil || outer) {
		if observe {
			fmt.Fprintf(os.Stderr, "srt: warning: filesystem violations are not reported for this command: %v\n", err)
		}
		if chains {
			fmt.Fprintf(os.Stderr, "srt: warning: %s: %v\n", noChainsWarning, err)
		}
		if readOnly {
			fmt.Fprintf(os.Stderr, "srt: warning: %s: %v\n", noReadOnlyWarning, err)
		}
		return nil
	}
	if err != nil && net != nil && !gate {
		return fmt.Errorf("the Landlock backend's supervisor of TCP connects and listens cannot run: %w (another seccomp supervisor runs this srt; use --backend bubblewrap)", err)
	}
	if errors.Is(err, seccomp.ErrListenerTaken) {
		return fmt.Errorf("network.allowUnixSockets: %w; inside it, leave allowUnixSockets empty (the outer sandbox's list still applies) or set allowAllUnixSockets (the filesystem observer, diagnostic, then goes without)", err)
	}
	return err
}

// noChainsWarning says what the command goes without when the chain
// supervisor cannot run.
const noChainsWarning = "the command cannot make, remove or rename entries of a writable directory that holds a write-protected path (the Landlock backend's supervisor for them cannot run)"

// noReadOnlyWarning says what the command goes without when the
// read-only supervisor cannot run.
const noReadOnlyWarning = "writes outside the write roots fail with EACCES rather than EROFS, and the command may change the mode, owner, times and extended attributes of files it owns outside them (the Landlock backend's supervisor for them cannot run)"

// startSupervisor installs the notifying filter on this thread (locked by
// run: the one that starts the command, which inherits the filter; the
// init stage's other threads, where the handlers run, stay outside it) and
// serves its notifications.
func startSupervisor(arch seccomp.Arch, net *netGate) error {
	prog, err := seccomp.BuildNotify(arch, supervisor.Calls())
	if err != nil {
		return err
	}
	// This thread's filters are the command's when it starts: those it
	// has now and the notifying one. Counted before that one is
	// installed: once it is, an open of this thread may wait for the
	// supervisor (every open is notified where a hidden path lies in a
	// writable directory), which does not serve yet.
	before := 0
	if net != nil {
		before = seccompFilters("thread-self")
	}
	listener, err := seccomp.InstallListener(prog)
	if err == nil && net != nil && before > 0 {
		net.baseFilters = before + 1
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
