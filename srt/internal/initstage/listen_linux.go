package initstage

import (
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// listen makes the listening sockets of the spec inside the sandbox's
// network namespace (where only the loopback interface exists) and sends
// them to srt, which hands them to the proxy outside. A connection made
// before the proxy accepts waits in the backlog; it is never refused.
func listen(channel int, addrs []string) error {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			return fmt.Errorf("listen %q: %w", a, err)
		}
		fd, err := listenTCP(ap)
		if err != nil {
			if ap.Addr().Is6() && (errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)) {
				continue // no IPv6 in this namespace
			}
			return fmt.Errorf("listen %s: %w", a, err)
		}
		fds = append(fds, fd)
	}
	if len(fds) > 255 {
		return errors.New("too many listeners")
	}
	return unix.Sendmsg(channel, []byte{MsgListeners, byte(len(fds))}, unix.UnixRights(fds...), nil, 0)
}

// listenBacklog holds connections made before the proxy accepts.
const listenBacklog = 4096

func listenTCP(ap netip.AddrPort) (int, error) {
	family := unix.AF_INET
	if ap.Addr().Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var sa unix.Sockaddr
	if family == unix.AF_INET {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
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
