package policy

import (
	"net/netip"
	"strings"

	"github.com/srt-sandbox/decider/hostname"
)

// patternKind says what a Pattern's host part is.
type patternKind uint8

const (
	kindName     patternKind = iota + 1 // exact DNS name ("example.com", "localhost")
	kindWildcard                        // "*.example.com": strict subdomains only
	kindIP                              // IPv4 or (bracketed) IPv6 literal
	kindAll                             // "*": deny-all, deniedDomains only
)

// Pattern is one validated allowedDomains / deniedDomains entry. It is
// immutable and comparable; the zero value matches nothing.
type Pattern struct {
	text string      // the entry exactly as written
	kind patternKind // what host is
	host string      // lower-case name, wildcard base (without "*."), or canonical IP text
	ip   netip.Addr  // for kindIP: the canonical address (IPv4-mapped unmapped, no zone)
	port int         // 0 = every port
}

// String returns the entry exactly as it was written, which is also the key
// deniedDomainReasons is looked up by.
func (p Pattern) String() string { return p.text }

// Port is the port the entry is restricted to, or 0 for every port.
func (p Pattern) Port() int { return p.port }

// Host is the entry's canonical host part: a lower-case name, the base of a
// wildcard (without "*."), a canonical IP address (IPv6 without brackets),
// or "*" for deny-all.
func (p Pattern) Host() string { return p.host }

// IsWildcard reports whether the entry is "*.<base>".
func (p Pattern) IsWildcard() bool { return p.kind == kindWildcard }

// IsIP reports whether the entry is an IP literal.
func (p Pattern) IsIP() bool { return p.kind == kindIP }

// IP returns the literal's address (an IPv4-mapped entry as IPv4, zone
// dropped), or the zero Addr for a non-IP entry.
func (p Pattern) IP() netip.Addr { return p.ip }

// DenyAll reports whether the entry is a bare "*" or "*:<port>".
func (p Pattern) DenyAll() bool { return p.kind == kindAll }

// Match reports whether the entry covers a destination. host must already be
// canonical (see hostname.Canonical); port is the destination port.
//
// Exact names compare equal ignoring ASCII case only (no Unicode folding, so
// "\u212a" never equals "k"); wildcards match strict subdomains and never an
// IP literal; IP entries match the same address; a port-scoped entry matches
// only its port; deny-all matches every host.
func (p Pattern) Match(host string, port int) bool {
	if p.port != 0 && p.port != port {
		return false
	}
	switch p.kind {
	case kindAll:
		return true
	case kindIP:
		a, ok := hostAddr(host)
		return ok && a == p.ip
	case kindName:
		return hostname.LowerASCII(host) == p.host
	case kindWildcard:
		if _, ok := hostAddr(host); ok || strings.HasPrefix(host, "[") {
			return false
		}
		h := hostname.LowerASCII(host)
		return len(h) > len(p.host)+1 && strings.HasSuffix(h, "."+p.host)
	}
	return false
}

// hostAddr parses a host that is an IP literal (IPv6 unbracketed), unmapping
// IPv4-mapped forms and dropping any zone.
func hostAddr(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}
