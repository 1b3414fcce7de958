package policy

import (
	"net/netip"
	"strings"
)

// InvalidAddressRangeMessage is the reference's validation message for a
// bad network.deniedResolvedAddresses entry.
const InvalidAddressRangeMessage = `Invalid IP address or CIDR range. Use an IPv4/IPv6 literal or CIDR, e.g. "10.0.0.0/8", "192.168.1.10", "fc00::/7" (IPv6 unbracketed).`

// AddressRangeError reports an invalid deniedResolvedAddresses entry.
type AddressRangeError struct {
	Entry string
}

func (e *AddressRangeError) Error() string { return InvalidAddressRangeMessage }

// ProxyOnlyDefaultDeniedRanges is deniedResolvedAddresses in proxy-only
// mode (§2.2): private-use space, which a workstation sandbox may reach by
// name but a remote workload's egress gate refuses.
var ProxyOnlyDefaultDeniedRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),     // RFC 1918
	netip.MustParsePrefix("172.16.0.0/12"),  // RFC 1918
	netip.MustParsePrefix("192.168.0.0/16"), // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),  // RFC 6598 shared address space (CGNAT)
	netip.MustParsePrefix("fc00::/7"),       // RFC 4193 unique local addresses
}

// ParseAddressRange parses a deniedResolvedAddresses entry: an IPv4 or IPv6
// literal or CIDR, IPv6 unbracketed ("10.0.0.0/8", "192.168.1.10",
// "fc00::/7"). The prefix length is 1–3 decimal digits; the address is
// masked to it. An IPv6 zone id is dropped. An IPv4-mapped IPv6 range is
// stored as the IPv4 range it covers ("::ffff:10.0.0.0/104" → 10.0.0.0/8);
// one shorter than /96 is refused, since it is not all IPv4-mapped.
func ParseAddressRange(s string) (netip.Prefix, error) {
	addrText, bitsText, hasBits := strings.Cut(s, "/")
	if i := strings.IndexByte(addrText, '%'); i >= 0 {
		if !strings.Contains(addrText[:i], ":") {
			return netip.Prefix{}, &AddressRangeError{Entry: s}
		}
		addrText = addrText[:i]
	}
	a, err := netip.ParseAddr(addrText)
	if err != nil {
		return netip.Prefix{}, &AddressRangeError{Entry: s}
	}
	bits := a.BitLen()
	if hasBits {
		if bits, err = parsePrefixLen(bitsText, a.BitLen()); err != nil {
			return netip.Prefix{}, &AddressRangeError{Entry: s}
		}
	}
	if a.Is4In6() {
		if bits < 96 {
			return netip.Prefix{}, &AddressRangeError{Entry: s}
		}
		a, bits = a.Unmap(), bits-96
	}
	return netip.PrefixFrom(a, bits).Masked(), nil
}

// parsePrefixLen accepts ^\d{1,3}$ up to max.
func parsePrefixLen(s string, max int) (int, error) {
	if len(s) == 0 || len(s) > 3 {
		return 0, &AddressRangeError{Entry: s}
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &AddressRangeError{Entry: s}
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > max {
		return 0, &AddressRangeError{Entry: s}
	}
	return n, nil
}
