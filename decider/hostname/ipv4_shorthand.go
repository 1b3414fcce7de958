package hostname

import (
	"net/netip"
	"strings"
)

// The WHATWG URL Standard reads a host whose last label is numeric as an
// IPv4 address in inet_aton shorthand ("127.1", "0x7f.1", "2130706433",
// "0177.0.0.1") — and so do getaddrinfo and the reference. These functions
// implement its "ends in a number checker", "IPv4 parser" and "IPv4 number
// parser" (URL Standard §3.5) for lower-case ASCII input.

// EndsInNumber reports whether the URL parser would treat s as IPv4.
func EndsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// ParseIPv4Shorthand is the URL Standard's IPv4 parser.
func ParseIPv4Shorthand(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number is the URL Standard's IPv4 number parser: decimal, octal
// with a leading "0", hex with "0x"; "0x" alone is 0. Values past 2^32 are
// clamped (they fail the parser's range checks either way).
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d, ok := digitValue(s[i])
		if !ok || d >= base {
			return 0, false
		}
		if n = n*base + d; n > 1<<33 {
			n = 1 << 33
		}
	}
	return n, true
}

func digitValue(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}
