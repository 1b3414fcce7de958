//go:build !linux

package capture

import (
	"errors"
	"net"
	"net/netip"
)

// OriginalDst is Linux's alone: the capture listener takes connections
// that the sandbox's network namespace redirected to it, and only Linux
// has those (origdst_linux.go).
func OriginalDst(*net.TCPConn) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.New("capture: the original destination of a redirected connection is Linux only (SO_ORIGINAL_DST); capture is not supported on this platform")
}
