package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Sizes of the socket addresses the kernel writes: struct sockaddr_in
// (family, port, address, 8 bytes of zero) and struct sockaddr_in6
// (family, port, flow info, address, scope id).
const (
	sizeofSockaddrIn  = 16
	sizeofSockaddrIn6 = 28
)

var errNoOriginal = errors.New("no original destination")

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
