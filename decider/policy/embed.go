package policy

import "net/netip"

// Prefixes of IPv6 forms a network delivers to the IPv4 address they carry.
var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052 §2.1
	sixToFour      = netip.MustParsePrefix("2002::/16")       // RFC 3056: 2002:AABB:CCDD::/48 ↔ A.B.C.D
	v4Compatible   = netip.MustParsePrefix("::/96")           // RFC 4291 §2.5.5.1 (deprecated)
	v4Translated   = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 §2.1 IPv4-translated
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries in a form
// that reaches that IPv4 destination: IPv4-mapped (::ffff:0:0/96),
// IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96), the NAT64
// well-known prefix (64:ff9b::/96) and 6to4 (2002::/16). The local-use NAT64
// prefix 64:ff9b:1::/48 and network-specific prefixes are not decoded: their
// layout (RFC 6052 §2.2 allows /32…/96) cannot be told from the address.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	a = a.WithZone("")
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case nat64WellKnown.Contains(a), v4Compatible.Contains(a), v4Translated.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	return netip.Addr{}, false
}
