package capture

import (
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
