package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// soOriginalDst is SO_ORIGINAL_DST (linux/netfilter_ipv4.h) at level
// SOL_IP, and IP6T_SO_ORIGINAL_DST (linux/netfilter_ipv6/ip6_tables.h) at
// level SOL_IPV6: both 80. They give the destination a connection had
// before a NAT rule (REDIRECT) changed it, from the connection's
// conntrack entry.
const soOriginalDst = 80

// Sizes of the socket addresses the kernel writes: struct sockaddr_in
// (family, port, address, 8 bytes of zero) and struct sockaddr_in6
// (family, port, flow info, address, scope id).
const (
	sizeofSockaddrIn  = 16
	sizeofSockaddrIn6 = 28
)

var errNoOriginal = errors.New("no original destination")

// OriginalDst returns the destination c had before the namespace's NAT
// rules redirected it to the capture listener.
func OriginalDst(c *net.TCPConn) (netip.AddrPort, error) {
	local, ok := c.LocalAddr().(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, errNoOriginal
	}
	level, size := unix.SOL_IP, sizeofSockaddrIn
	if local.IP.To4() == nil {
		level, size = unix.SOL_IPV6, sizeofSockaddrIn6
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	buf := make([]byte, sizeofSockaddrIn6)
	n := uint32(size)
	var errno unix.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, uintptr(level), soOriginalDst,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	})
	if err != nil {
		return netip.AddrPort{}, err
	}
	if errno != 0 {
		return netip.AddrPort{}, fmt.Errorf("getsockopt SO_ORIGINAL_DST: %w", errno)
	}
	return parseSockaddr(buf[:min(int(n), len(buf))])
}

// parseSockaddr reads a struct sockaddr_in or sockaddr_in6 as the kernel
// wrote it: the family in host byte order, the port and the address in
// network byte order. An IPv4-mapped IPv6 address is returned as IPv4.
func parseSockaddr(b []byte) (netip.AddrPort, error) {
	if len(b) < 2 {
		return netip.AddrPort{}, fmt.Errorf("%w: %d bytes", errShortSockaddr, len(b))
	}
	switch family := binary.NativeEndian.Uint16(b); family {
	case unix.AF_INET:
		if len(b) < 8 {
			return netip.AddrPort{}, fmt.Errorf("%w: %d bytes of sockaddr_in", errShortSockaddr, len(b))
		}
		port := binary.BigEndian.Uint16(b[2:4])
		return check(netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port))
	case unix.AF_INET6:
		if len(b) < 24 {
			return netip.AddrPort{}, fmt.Errorf("%w: %d bytes of sockaddr_in6", errShortSockaddr, len(b))
		}
		port := binary.BigEndian.Uint16(b[2:4])
		return check(netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), port))
	default:
		return netip.AddrPort{}, fmt.Errorf("original destination of address family %d", family)
	}
}

var errShortSockaddr = errors.New("short socket address")

// check refuses what no connection can have gone to: port 0, the
// unspecified address.
func check(ap netip.AddrPort) (netip.AddrPort, error) {
	if ap.Port() == 0 || ap.Addr().IsUnspecified() {
		return netip.AddrPort{}, fmt.Errorf("original destination %v is no destination", ap)
	}
	return ap, nil
}
