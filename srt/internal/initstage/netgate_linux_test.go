package initstage

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

func sockaddr4(a [4]byte, port uint16) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint16(b, unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], a[:])
	return b
}

func sockaddr6(a netip.Addr, port uint16, n int) []byte {
	b := make([]byte, 28)
	binary.NativeEndian.PutUint16(b, unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], port)
	a16 := a.As16()
	copy(b[8:], a16[:])
	return b[:n]
}

// TestParseInetAddr: the destination is what the kernel would connect to,
// and the errnos are the kernel's for the same bad addresses.
func TestParseInetAddr(t *testing.T) {
	mapped := netip.MustParseAddr("::ffff:127.0.0.2")
	for _, c := range []struct {
		name   string
		domain int
		sa     []byte
		want   string
		errno  unix.Errno
	}{
		{"v4", unix.AF_INET, sockaddr4([4]byte{127, 0, 0, 1}, 3128), "127.0.0.1:3128", 0},
		{"v4 short", unix.AF_INET, sockaddr4([4]byte{127, 0, 0, 1}, 3128)[:15], "", unix.EINVAL},
		{"v6 on v4", unix.AF_INET, sockaddr6(mapped, 1, 28), "", unix.EAFNOSUPPORT},
		{"v6 mapped", unix.AF_INET6, sockaddr6(mapped, 80, 28), "[::ffff:127.0.0.2]:80", 0},
		{"v6 rfc2133", unix.AF_INET6, sockaddr6(netip.IPv6Loopback(), 80, 24), "[::1]:80", 0},
		{"v6 short", unix.AF_INET6, sockaddr6(netip.IPv6Loopback(), 80, 23), "", unix.EINVAL},
		{"v4 on v6", unix.AF_INET6, append(sockaddr4([4]byte{127, 0, 0, 1}, 80), make([]byte, 12)...), "", unix.EAFNOSUPPORT},
		{"unspec", unix.AF_INET, []byte{0, 0}, "invalid AddrPort", 0},
		{"one byte", unix.AF_INET, []byte{2}, "", unix.EINVAL},
		{"unix on v4", unix.AF_INET, append([]byte{1, 0}, make([]byte, 20)...), "", unix.EAFNOSUPPORT},
	} {
		got, e := parseInetAddr(c.domain, c.sa)
		if e != c.errno || (e == 0 && got.String() != c.want) {
			t.Errorf("%s: %v %v, want %s %v", c.name, got, e, c.want, c.errno)
		}
	}
}

// TestNetGateAllows: only the destinations listed, an IPv4-mapped address
// as its IPv4 address.
func TestNetGateAllows(t *testing.T) {
	g := &netGate{allowed: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128"), netip.MustParseAddrPort("[::1]:3128")}}
	for ap, want := range map[string]bool{
		"127.0.0.1:3128": true, "[::ffff:127.0.0.1]:3128": true, "[::1]:3128": true,
		"127.0.0.2:3128": false, "[::ffff:127.0.0.2]:3128": false, "127.0.0.1:3129": false,
		"192.0.2.1:3128": false, "[::ffff:192.0.2.1]:3128": false, "0.0.0.0:3128": false, "[::]:3128": false,
	} {
		if got := g.allows(netip.MustParseAddrPort(ap)); got != want {
			t.Errorf("%s: %v", ap, got)
		}
	}
}

// FuzzParseInetAddr: any address parses without panic, and one that
// parses is of the socket's family with its port.
func FuzzParseInetAddr(f *testing.F) {
	f.Add(unix.AF_INET, sockaddr4([4]byte{127, 0, 0, 1}, 3128))
	f.Add(unix.AF_INET6, sockaddr6(netip.MustParseAddr("::ffff:127.0.0.1"), 80, 28))
	f.Add(unix.AF_INET6, sockaddr6(netip.IPv6Loopback(), 80, 24))
	f.Add(unix.AF_INET, []byte{0, 0})
	f.Fuzz(func(t *testing.T, domain int, sa []byte) {
		if domain != unix.AF_INET {
			domain = unix.AF_INET6
		}
		ap, e := parseInetAddr(domain, sa)
		if e != 0 || !ap.IsValid() {
			return
		}
		if ap.Port() != binary.BigEndian.Uint16(sa[2:]) || ap.Addr().Is4() != (domain == unix.AF_INET) {
			t.Fatalf("%d %x: %v", domain, sa, ap)
		}
	})
}
