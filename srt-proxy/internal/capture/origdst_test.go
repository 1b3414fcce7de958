package capture

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// sockaddr builds the bytes the kernel writes for ap.
func sockaddr(ap netip.AddrPort) []byte {
	if ap.Addr().Is4() {
		b := make([]byte, sizeofSockaddrIn)
		binary.NativeEndian.PutUint16(b, unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As4()
		copy(b[4:], a[:])
		return b
	}
	b := make([]byte, sizeofSockaddrIn6)
	binary.NativeEndian.PutUint16(b, unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().As16()
	copy(b[8:], a[:])
	return b
}

func TestParseSockaddr(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want string // "" with err
		err  string
	}{
		{"ipv4", sockaddr(netip.MustParseAddrPort("198.18.128.5:80")), "198.18.128.5:80", ""},
		{"ipv6", sockaddr(netip.MustParseAddrPort("[fd00:5253:0:1::5]:443")), "[fd00:5253:0:1::5]:443", ""},
		{"mapped", sockaddr(netip.MustParseAddrPort("[::ffff:192.0.2.1]:22")), "192.0.2.1:22", ""},
		// What the kernel wrote in a namespace of this test (python3 getsockopt).
		{"kernel v6", hexBytes("0a0001bb00000000fd00525300000001000000000000000500000000"), "[fd00:5253:0:1::5]:443", ""},
		{"empty", nil, "", "short socket address: 0 bytes"},
		{"short v4", sockaddr(netip.MustParseAddrPort("192.0.2.1:1"))[:7], "", "short socket address: 7 bytes of sockaddr_in"},
		{"short v6", sockaddr(netip.MustParseAddrPort("[2001:db8::1]:1"))[:23], "", "short socket address: 23 bytes of sockaddr_in6"},
		{"port 0", sockaddr(netip.MustParseAddrPort("192.0.2.1:0")), "", "original destination 192.0.2.1:0 is no destination"},
		{"unspecified", sockaddr(netip.MustParseAddrPort("[::]:80")), "", "original destination [::]:80 is no destination"},
		{"unix family", []byte{1, 0, 0, 0}, "", "original destination of address family 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "kernel v6" && binary.NativeEndian.Uint16([]byte{0x0a, 0}) != unix.AF_INET6 {
				t.Skip("the recorded bytes are little-endian")
			}
			got, err := parseSockaddr(c.in)
			switch {
			case c.err != "":
				if err == nil || err.Error() != c.err {
					t.Fatalf("parseSockaddr = %v, %v; want the error %q", got, err, c.err)
				}
			case err != nil || got.String() != c.want:
				t.Fatalf("parseSockaddr = %v, %v; want %s", got, err, c.want)
			}
		})
	}
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// The parser takes any bytes: an address it returns is one the bytes
// encode, with a port, and never unspecified.
func FuzzParseSockaddr(f *testing.F) {
	f.Add(sockaddr(netip.MustParseAddrPort("198.18.128.5:80")))
	f.Add(sockaddr(netip.MustParseAddrPort("[fd00:5253:0:1::5]:443")))
	f.Add(sockaddr(netip.MustParseAddrPort("[::ffff:127.0.0.1]:8765")))
	f.Add([]byte{2, 0})
	f.Add([]byte{10, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ap, err := parseSockaddr(b)
		if err != nil {
			return
		}
		if !ap.IsValid() || ap.Port() == 0 || ap.Addr().IsUnspecified() || ap.Addr().Is4In6() {
			t.Fatalf("parseSockaddr(% x) = %v", b, ap)
		}
		if got, err := parseSockaddr(sockaddr(ap)); err != nil || got != ap {
			t.Fatalf("round trip of %v: %v, %v", ap, got, err)
		}
		if binary.BigEndian.Uint16(b[2:4]) != ap.Port() {
			t.Fatalf("port %d from % x", ap.Port(), b)
		}
	})
}
