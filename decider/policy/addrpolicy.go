package policy

import (
	"net/netip"
	"strings"

	"github.com/srt-sandbox/decider/hostname"
)

// AddressPolicy judges the addresses a hostname resolved to before the proxy
// dials one (§4.6). It applies only to hostname destinations dialled
// directly; an IP-literal destination is judged by the lists alone. A nil
// *AddressPolicy applies the built-in rules only.
type AddressPolicy struct {
	Allowed      []Pattern      // allowedDomains; only IP-literal entries are used
	Denied       []Pattern      // deniedDomains; only IP-literal entries are used
	DeniedRanges []netip.Prefix // deniedResolvedAddresses
	HostAddrs    []netip.Addr   // addresses on this host's interfaces now
}

// Check reports whether a connection to host:port may use the resolved
// address addr, and if not, the class of the refusal. host is the
// destination as matched (canonical). The rules, in order:
//
//  1. an IP literal in Denied (port-aware) refuses: ClassDenyListed;
//  2. an IP literal in Allowed (port-aware) accepts;
//  3. for "localhost" and "*.localhost" only loopback is accepted, else
//     ClassNonLoopback;
//  4. the built-in ranges (loopback, unspecified, link-local, multicast,
//     broadcast, cloud metadata) refuse with their class;
//  5. DeniedRanges refuse: ClassListed;
//  6. HostAddrs refuse: ClassHostAddr.
//
// An IPv4-mapped address is judged as its IPv4 address throughout. The IPv4
// address other embedding forms carry (see embeddedIPv4) is checked by the
// refusing rules 1, 4, 5 and 6 too, but never earns the exemption of rule 2
// nor counts as loopback in rule 3. An invalid addr is ClassUnparsable.
func (p *AddressPolicy) Check(host string, port int, addr netip.Addr) (ok bool, class AddrClass) {
	if _, isIP := hostAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); isIP {
		return true, ""
	}
	if !addr.IsValid() {
		return false, ClassUnparsable
	}
	if p == nil {
		p = &AddressPolicy{}
	}
	a := addr.WithZone("").Unmap()
	v4, hasV4 := embeddedIPv4(a)
	refuses := func(match func(netip.Addr) bool) bool {
		return match(a) || hasV4 && match(v4)
	}
	if refuses(func(x netip.Addr) bool { return literalListed(p.Denied, x, port) }) {
		return false, ClassDenyListed
	}
	if literalListed(p.Allowed, a, port) {
		return true, ""
	}
	if isLoopbackName(host) {
		if isLoopback(a) {
			return true, ""
		}
		return false, ClassNonLoopback
	}
	for _, row := range builtinDenied {
		if refuses(row.prefix.Contains) {
			return false, row.class
		}
	}
	for _, r := range p.DeniedRanges {
		if refuses(r.Contains) {
			return false, ClassListed
		}
	}
	for _, h := range p.HostAddrs {
		h = h.WithZone("").Unmap()
		if refuses(func(x netip.Addr) bool { return x == h }) {
			return false, ClassHostAddr
		}
	}
	return true, ""
}

// literalListed reports whether an IP-literal entry of list names a on port.
func literalListed(list []Pattern, a netip.Addr, port int) bool {
	for _, p := range list {
		if p.IsIP() && p.IP() == a && (p.Port() == 0 || p.Port() == port) {
			return true
		}
	}
	return false
}

// isLoopbackName reports whether host is "localhost" or under ".localhost"
// (RFC 6761 §6.3).
func isLoopbackName(host string) bool {
	h := strings.TrimSuffix(hostname.LowerASCII(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// isLoopback reports whether an (unmapped) address is 127.0.0.0/8 or ::1.
func isLoopback(a netip.Addr) bool {
	return a.Is4() && a.As4()[0] == 127 || a == netip.IPv6Loopback()
}

// FilterAddrs applies Check to every resolved address of host:port. It
// returns the accepted addresses in their original order and, when some were
// given but none is accepted, the refusal reason "resolved to <class>[ /
// <class>…]" with each class once, in priority order (so the text does not
// depend on the resolver's ordering). With no addresses at all it returns
// no reason: that is a resolution failure, not a policy refusal.
func (p *AddressPolicy) FilterAddrs(host string, port int, addrs []netip.Addr) (kept []netip.Addr, reason string) {
	seen := map[AddrClass]bool{}
	for _, a := range addrs {
		if ok, class := p.Check(host, port, a); ok {
			kept = append(kept, a)
		} else {
			seen[class] = true
		}
	}
	if len(kept) > 0 || len(seen) == 0 {
		return kept, ""
	}
	var classes []string
	for _, c := range classOrder {
		if seen[c] {
			classes = append(classes, string(c))
		}
	}
	return nil, "resolved to " + strings.Join(classes, " / ")
}
