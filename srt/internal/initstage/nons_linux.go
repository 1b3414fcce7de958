package initstage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/landlock"
	"github.com/srt-sandbox/srt/internal/seccomp"
)

// noNS is set once the spec asks for the mode without namespaces.
var noNS bool

// checkPID1 refuses to run the init stage anywhere but as PID 1 of a
// sandbox, unless srt started it without namespaces: then it makes itself
// the subreaper of everything the command starts, so that what the
// command leaves behind stays its to end (killAll).
func checkPID1(spec Spec) error {
	if spec.NoNS.On {
		noNS = true
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("init stage: subreaper: %w", err)
		}
		return nil
	}
	if os.Getpid() != 1 {
		return errors.New(Flag + " is srt's in-sandbox init stage and runs only as PID 1 of a sandbox")
	}
	return nil
}

// killAll ends every process of the sandbox and reaps it: kill(-1) as a
// PID namespace's PID 1; without namespaces, every descendant (all of
// which the subreaper inherits), round after round, as orphans of the
// killed ones come to it. A child is not reaped before it is killed, so
// its number cannot name another process meanwhile.
func killAll() {
	if !noNS {
		unix.Kill(-1, unix.SIGKILL)
		for {
			if _, err := unix.Wait4(-1, nil, 0, nil); err != nil && err != unix.EINTR {
				return
			}
		}
	}
	for round := 0; round < 10000; round++ {
		kids := children()
		for _, pid := range kids {
			unix.Kill(pid, unix.SIGKILL)
		}
		reaped := false
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err == unix.ECHILD {
				return
			}
			if pid <= 0 {
				break
			}
			reaped = true
		}
		if !reaped && len(kids) == 0 {
			// Children that /proc did not list yet: wait for one.
			if _, err := unix.Wait4(-1, nil, 0, nil); err == unix.ECHILD {
				return
			}
		}
	}
}

// children are the init stage's child processes, from every thread's
// /proc children list, else from a scan of /proc.
func children() []int {
	var out []int
	tasks, err := os.ReadDir("/proc/self/task")
	if err == nil {
		for _, t := range tasks {
			data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
			if err != nil {
				out = nil
				break
			}
			for _, f := range strings.Fields(string(data)) {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, n)
				}
			}
		}
		if err == nil && out != nil {
			return out
		}
	}
	self := strconv.Itoa(os.Getpid())
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == self {
				out = append(out, n)
			}
		}
	}
	return out
}

// restrictNoNS applies the Landlock part of the mode without namespaces on
// this thread (the one that starts the command): the capabilities of a
// root caller go first, then the grants, the TCP rules and the scopes.
// Nothing degrades: a kernel without what srt asked for is an error (srt
// checked it before, and asked only for what the user did not give up).
func restrictNoNS(n NoNS) error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	var grants []Grant
	if n.GrantsFD > 0 {
		f := os.NewFile(uintptr(n.GrantsFD), "grants")
		data, err := readAllLimited(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("landlock grants: %w", err)
		}
		if grants, err = DecodeGrants(data); err != nil {
			return err
		}
	}
	p := landlock.Policy{HandleReads: n.Reads, HandleNet: n.Net, ScopeSignals: n.ScopeSignals, ScopeAbstractUnix: true}
	for _, g := range grants {
		p.Paths = append(p.Paths, landlock.PathGrant{Path: g.Path, Rights: landlock.Rights(g.Rights)})
		if g.Rights&GrantWrite != 0 {
			noNSWriteRoots = append(noNSWriteRoots, g.Path)
		}
		if g.Rights&GrantRead != 0 {
			noNSReadRoots = append(noNSReadRoots, g.Path)
		}
	}
	for _, port := range n.ConnectPorts {
		p.ConnectPorts = append(p.ConnectPorts, uint16(port))
	}
	for _, port := range n.BindPorts {
		p.BindPorts = append(p.BindPorts, uint16(port))
	}
	abi, skipped, err := landlock.ApplyPolicy(p)
	if err != nil {
		return fmt.Errorf("landlock (no namespaces): %w", err)
	}
	debug("Landlock ABI %d without namespaces: %d grants (%d not there), reads restricted: %t, TCP rules: %t (connect %v, bind %v), signals scoped: %t",
		abi, len(grants), len(skipped), n.Reads, n.Net, n.ConnectPorts, n.BindPorts, n.ScopeSignals)
	return nil
}

func readAllLimited(f *os.File) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxRulesSize+1))
	if err == nil && len(data) > maxRulesSize {
		err = errors.New("too large")
	}
	return data, err
}

// dropCapabilities leaves a command run as root without any capability:
// with no user namespace around it, root's are the host's (loading
// modules, raw sockets, reading every file, changing the network). The
// bounding set is emptied and root's special treatment at exec is locked
// off (SECBIT_NOROOT), so that nothing the command runs gets one back;
// no_new_privs already holds. A caller without capabilities has nothing
// to drop.
func dropCapabilities() error {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective|data[1].Effective|data[0].Permitted|data[1].Permitted == 0 {
		return nil
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = v
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	// SECURE_NOROOT and SECURE_NO_SETUID_FIXUP on, SECURE_KEEP_CAPS off,
	// each locked.
	const secbits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// installNoNSFilter stacks the filters of the mode without namespaces:
// TCP the only network socket (seccomp.BuildTCPOnly), and no signal to
// the init stage (seccomp.BuildProtectPID).
func installNoNSFilter(arch seccomp.Arch, n NoNS) error {
	if !n.On {
		return nil
	}
	var progs [][]unix.SockFilter
	if n.InetTCPOnly {
		var err error
		if progs, err = seccomp.BuildTCPOnly(arch); err != nil {
			return err
		}
	}
	protect, err := seccomp.BuildProtectPID(arch, os.Getpid())
	if err != nil {
		return err
	}
	for _, p := range progs {
		if err := seccomp.Install(p); err != nil {
			return err
		}
	}
	// This thread alone (it starts the command): the Go runtime's other
	// threads signal one another (tgkill to this process) and must not
	// be refused.
	return seccomp.InstallThisThread(protect)
}
