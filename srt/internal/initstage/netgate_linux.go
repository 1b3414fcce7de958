package initstage

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/unixgate"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// netGate is the Landlock backend's supervisor of TCP connects and
// listens (NoNS.ConnectTo). Landlock's network rules know ports and not
// addresses, and the kernel binds a socket listen(2) is called on
// without a port to an ephemeral one on every address without asking
// Landlock; so every connect(2) and listen(2) of the command is
// notified, and the gate performs it itself, on the command's socket
// (taken with pidfd_getfd: a socket swapped onto the number later
// changes nothing) and on the one copy of the address it read:
//
//   - connect of an IP socket: to a destination of ConnectTo (an
//     IPv4-mapped address is its IPv4 address), else EACCES, as
//     Landlock refuses a port;
//   - listen of an IP socket without a port: EACCES, as Landlock refuses
//     the bind that listen would make;
//   - a Unix socket's connect: the Unix socket gate's (unix): of the
//     listed paths when network.allowUnixSockets lists any, else of
//     every path (abstract names refused, EPERM: the gate's connect
//     would skip Landlock's scope), performed on the copy with the
//     command's credentials;
//   - any other socket's (netlink): performed on the copy of the
//     address, with the command's credentials (asCommand).
//
// No connect runs as the process made it (Continue): the kernel would
// take the descriptor and the address again, where a thread may have put
// a TCP socket and an address of its choosing meanwhile (Landlock's
// ports, on any address). So the connect of a process that has seccomp
// filters of its own (more than the command started with, baseFilters:
// an srt inside, whose supervisor cannot run under this one, or a
// program that sandboxes itself) is made here too, outside its Landlock
// domain, whose TCP rules it then skips: such a process reaches only the
// spare listeners (nested), where an srt inside serves its own command,
// and not this srt's proxies or allowedDomains' loopback destinations,
// which an srt inside may not allow.
//
// Refusals are reported as violations ("deny tcp-connect ADDR",
// "deny tcp-listen").
type netGate struct {
	allowed []netip.AddrPort
	unix    func(r *usernotif.Request, sock, domain int) usernotif.Reply // the Unix socket gate's connect, or nil
	report  func(string)
	// nested are the destinations of a process with seccomp filters of
	// its own (the spare listeners, where an srt inside serves).
	nested []netip.AddrPort
	// baseFilters is the number of seccomp filters the command starts
	// with (0: unknown; every process is held to allowed).
	baseFilters int
}

// register adds the gate's handlers to s: both on goroutines of their
// own (a blocking connect waits there, not in the supervisor's loop).
func (g *netGate) register(s *usernotif.Server) error {
	if err := s.Register(seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, g.connect); err != nil {
		return err
	}
	return s.Register(seccomp.Notify{Syscall: "listen"}, unix.SYS_LISTEN, g.listen)
}

// SIN6_LEN_RFC2133: the shortest sockaddr_in6 the kernel takes (without
// sin6_scope_id).
const sin6LenRFC2133 = 24

func isIP(domain int) bool { return domain == unix.AF_INET || domain == unix.AF_INET6 }

func (g *netGate) connect(r *usernotif.Request) usernotif.Reply {
	sock, domain, err := unixgate.Socket(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(unixgate.ErrnoOf(err))
	}
	defer unix.Close(sock)
	if !isIP(domain) && domain != unix.AF_UNIX {
		// A netlink socket (the one other family the filters let the
		// command make) or one it inherited: performed here too, on the
		// copy, with the command's credentials. Let run, the kernel would
		// take the number again, where a thread may have put a TCP socket
		// meanwhile (Landlock's ports, on any address); and performed
		// with the init stage's capabilities (a root caller's), a
		// netlink_connect to a multicast group would be theirs.
		sa, e := readSockaddr(r)
		if e != 0 {
			return usernotif.Fail(e)
		}
		return g.connectAs(sock, sa, true)
	}
	if !isIP(domain) {
		if g.unix != nil {
			return g.unix(r, sock, domain)
		}
		return usernotif.Fail(unix.EACCES) // supervise sets unix always
	}
	sa, e := readSockaddr(r)
	if e != 0 {
		return usernotif.Fail(e)
	}
	dest, e := parseInetAddr(domain, sa)
	if e != 0 {
		return usernotif.Fail(e)
	}
	if dest.IsValid() && !g.allows(dest) {
		if g.report != nil {
			g.report("deny tcp-connect " + dest.String())
		}
		return usernotif.Fail(unix.EACCES)
	}
	// The filters counted are the caller's only if its notification is
	// still pending afterwards (its thread id not reused meanwhile).
	if dest.IsValid() && g.baseFilters > 0 && !g.allowsNested(dest) && (seccompFilters(strconv.Itoa(r.Pid)) > g.baseFilters || !r.Valid()) {
		// A process with seccomp filters of its own (an srt inside, or
		// a program that sandboxes itself) reaches only the spare
		// listeners, where an srt inside serves: its Landlock domain,
		// which the connect made here skips, may allow less than this
		// srt's destinations (an srt inside allows its own proxies).
		if g.report != nil {
			g.report("deny tcp-connect " + dest.String() + " (a process with seccomp filters of its own: only the spare listeners of an srt inside)")
		}
		return usernotif.Fail(unix.EACCES)
	}
	// dest not valid: AF_UNSPEC, which disconnects (connects nowhere).
	return g.connectAs(sock, sa, false)
}

// readSockaddr copies connect's address.
func readSockaddr(r *usernotif.Request) ([]byte, unix.Errno) {
	sa, err := unixgate.ReadAddr(r, r.Args[1], r.Args[2])
	if err != nil {
		return nil, unixgate.ErrnoOf(err)
	}
	return sa, 0
}

// connectAs connects sock to sa, with the command's credentials when
// asCmd (asCommand: no capability of the init stage's).
func (g *netGate) connectAs(sock int, sa []byte, asCmd bool) usernotif.Reply {
	var p unsafe.Pointer
	if len(sa) > 0 {
		p = unsafe.Pointer(&sa[0])
	}
	var e unix.Errno
	call := func() {
		_, _, e = unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(sa)))
	}
	if !asCmd {
		call()
	} else if !asCommand(call) {
		return usernotif.Fail(unix.EPERM)
	}
	if e != 0 {
		return usernotif.Fail(e)
	}
	return usernotif.Reply{}
}

// allows says whether dest is one of the destinations allowed.
func (g *netGate) allows(dest netip.AddrPort) bool { return holds(g.allowed, dest) }

// allowsNested says whether dest is a spare listener's (nested).
func (g *netGate) allowsNested(dest netip.AddrPort) bool { return holds(g.nested, dest) }

// holds says whether list has dest, an IPv4-mapped address as its IPv4
// address.
func holds(list []netip.AddrPort, dest netip.AddrPort) bool {
	return slices.Contains(list, netip.AddrPortFrom(dest.Addr().Unmap(), dest.Port()))
}

// parseInetAddr reads the destination of a connect on an IP socket of
// domain: the zero AddrPort for AF_UNSPEC (a disconnect), or the errno
// the kernel's connect gives such an address (too short: EINVAL; another
// family: EAFNOSUPPORT; an IPv4 address on an IPv6 socket included).
func parseInetAddr(domain int, sa []byte) (netip.AddrPort, unix.Errno) {
	if len(sa) < 2 {
		return netip.AddrPort{}, unix.EINVAL
	}
	family := binary.NativeEndian.Uint16(sa)
	if family == unix.AF_UNSPEC {
		return netip.AddrPort{}, 0
	}
	need, want := unix.SizeofSockaddrInet4, uint16(unix.AF_INET)
	if domain == unix.AF_INET6 {
		need, want = sin6LenRFC2133, unix.AF_INET6
	}
	switch {
	case len(sa) < need:
		return netip.AddrPort{}, unix.EINVAL
	case family != want:
		return netip.AddrPort{}, unix.EAFNOSUPPORT
	}
	port := binary.BigEndian.Uint16(sa[2:])
	if domain == unix.AF_INET6 {
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(sa[8:24])), port), 0
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(sa[4:8])), port), 0
}

func (g *netGate) listen(r *usernotif.Request) usernotif.Reply {
	sock, domain, err := unixgate.Socket(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(unixgate.ErrnoOf(err))
	}
	defer unix.Close(sock)
	if isIP(domain) {
		sa, err := unix.Getsockname(sock)
		if err != nil {
			return usernotif.Fail(unixgate.ErrnoOf(err))
		}
		port := 0
		switch a := sa.(type) {
		case *unix.SockaddrInet4:
			port = a.Port
		case *unix.SockaddrInet6:
			port = a.Port
		}
		if port == 0 {
			if g.report != nil {
				g.report("deny tcp-listen (a socket without a port, which listen would bind to any: bind it to a port of network.exposeLoopbackPorts first)")
			}
			return usernotif.Fail(unix.EACCES)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LISTEN, uintptr(sock), uintptr(int32(r.Args[1])), 0); e != 0 {
		return usernotif.Fail(e)
	}
	return usernotif.Reply{}
}

// seccompFilters reads the number of seccomp filters of /proc/task (a
// pid, a thread's id or "thread-self"): 0 when /proc does not say
// (Linux before 5.9).
func seccompFilters(task string) int {
	status, err := os.ReadFile("/proc/" + task + "/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Seccomp_filters:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}
