package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"os"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// channelFD is the helper's end of its socket pair with srt.
const channelFD = 3

// HelperMain runs the helper (argv[1] is Flag) and returns its exit status.
func HelperMain(args []string) int {
	spec, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: network namespace: %v\n", err)
		return 125
	}
	if err := prepare(spec); err != nil {
		// srt reads the end of the channel as a failure and says why
		// from stderr.
		fmt.Fprintf(os.Stderr, "srt: network namespace: %v\n", err)
		return 125
	}
	return 0
}

// sockets are what the helper makes, in the order they are sent.
type sockets struct {
	proxy, capture, dns []int
}

func (s *sockets) all() []int {
	return append(append(append([]int(nil), s.proxy...), s.capture...), s.dns...)
}

func prepare(spec Spec) error {
	if err := loUp(); err != nil {
		return err
	}
	var socks sockets
	defer func() {
		for _, fd := range socks.all() {
			unix.Close(fd)
		}
	}()
	var v6 bool
	nl, err := openRtnl()
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer nl.close()
	for _, ap := range spec.Proxy {
		fd, err := listenTCP(ap)
		if err != nil {
			if ap.Addr().Is6() && ipv6Missing(err) {
				continue
			}
			return fmt.Errorf("listen %s: %w", ap, err)
		}
		socks.proxy = append(socks.proxy, fd)
	}
	if spec.Capture {
		for _, a := range []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()} {
			// Bound to the wildcard address: a REDIRECTed connection's
			// destination is the primary address of lo, 127.0.0.1 or ::1.
			fd, err := listenTCP(netip.AddrPortFrom(a, CapturePort))
			if err != nil {
				// IPv6 may be disabled in this kernel: then only IPv4
				// is captured.
				if a.Is6() && ipv6Missing(err) {
					continue
				}
				return fmt.Errorf("capture listener %s: %w", a, err)
			}
			socks.capture = append(socks.capture, fd)
			v6 = a.Is6()
		}
		fd, err := bindUDP(DNS)
		if err != nil {
			return fmt.Errorf("DNS socket %s: %w", DNS, err)
		}
		socks.dns = append(socks.dns, fd)
		if fd, err = listenTCP(DNS); err != nil {
			return fmt.Errorf("DNS listener %s: %w", DNS, err)
		}
		socks.dns = append(socks.dns, fd)
	}
	// The namespaces go along: srt runs bubblewrap in them by descriptor,
	// so that nothing can swap them for others in between.
	netFD, err := netns.Get()
	if err != nil {
		return fmt.Errorf("own network namespace: %w", err)
	}
	defer netFD.Close()
	fds := append(socks.all(), int(netFD))
	if os.Getuid() != 0 || ownUserNS() {
		userFD, err := unix.Open("/proc/self/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("own user namespace: %w", err)
		}
		defer unix.Close(userFD)
		fds = append(fds, userFD)
	}
	head := []byte{msgListeners, byte(len(socks.proxy)), byte(len(socks.capture)), byte(len(socks.dns))}
	if err := unix.Sendmsg(channelFD, head, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("sending the sockets to srt: %w", err)
	}
	// srt plans and starts bubblewrap meanwhile; the command waits for
	// the report below.
	report := ""
	if spec.Capture {
		err := addresses(nl, v6)
		if err == nil {
			err = installRules(v6, spec.Loopback)
		}
		if err != nil {
			// No capture, then: without the default routes every
			// connection out fails at once, as without a namespace of
			// srt's own, instead of waiting for a timeout.
			nl.route(SourceV4, true)
			if v6 {
				nl.route(SourceV6, true)
			}
			report = err.Error()
		}
	}
	if err := unix.Sendmsg(channelFD, append([]byte{msgRules}, report...), nil, nil, 0); err != nil {
		return fmt.Errorf("reporting to srt: %w", err)
	}
	return nil
}

// addresses gives lo the capture's source addresses, with the default
// routes through lo from them.
func addresses(nl *rtnl, v6 bool) error {
	srcs := []netip.Addr{SourceV4}
	if v6 {
		srcs = append(srcs, SourceV6)
	}
	for _, a := range srcs {
		if err := nl.addAddr(a); err != nil {
			return err
		}
		if err := nl.route(a, false); err != nil {
			return err
		}
	}
	return nil
}

// ownUserNS reports whether the helper runs in a user namespace of its own
// (srt makes one for every user but root).
func ownUserNS() bool {
	self, err1 := os.Readlink("/proc/self/ns/user")
	init, err2 := os.Readlink("/proc/1/ns/user")
	return err1 == nil && err2 == nil && self != init
}

func ipv6Missing(err error) bool {
	return errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)
}

// listenBacklog holds connections made before srt-proxy accepts.
const listenBacklog = 4096

func sockaddr(ap netip.AddrPort) (int, unix.Sockaddr) {
	if ap.Addr().Is4() {
		return unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

func listenTCP(ap netip.AddrPort) (int, error) {
	fam, sa := sockaddr(ap)
	fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if fam == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, listenBacklog); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func bindUDP(ap netip.AddrPort) (int, error) {
	fam, sa := sockaddr(ap)
	fd, err := unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
