package dial

import (
	"net/netip"
	"strings"
)

// NoProxy is a parsed NO_PROXY list: the destinations that bypass the parent
// proxy. The zero value (and nil) exempts only loopback destinations.
type NoProxy struct {
	all      bool
	prefixes []netip.Prefix // CIDR entries and IP literals (exact /32, /128)
	suffixes []string       // domain entries, lower-case, without a leading dot
}

// ParseNoProxy parses a NO_PROXY value the way the reference (and
// golang.org/x/net/http/httpproxy) reads it: a comma-separated list of
//
//   - "*": every destination goes direct;
//   - a CIDR ("10.0.0.0/8", "fd00::/8"); a malformed one is ignored;
//   - an IP literal ("10.1.2.3", "::1", "[::1]");
//   - a domain ("example.com", ".example.com", "*.example.com"), each of
//     which matches the domain itself and every name under it.
//
// A ":port" suffix on an entry is ignored (the entry applies to every
// port). Empty entries are skipped; matching is case-insensitive.
func ParseNoProxy(s string) *NoProxy {
	n := &NoProxy{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		switch {
		case entry == "":
		case entry == "*":
			n.all = true
		case strings.Contains(entry, "/"):
			if p, err := netip.ParsePrefix(entry); err == nil {
				n.prefixes = append(n.prefixes, unmapPrefix(p))
			}
		default:
			n.addHost(entry)
		}
	}
	return n
}

// addHost adds an IP-literal or domain entry.
func (n *NoProxy) addHost(v string) {
	if strings.HasPrefix(v, "[") { // "[v6]" or "[v6]:port"
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return
		}
		v = v[1:end]
	} else if _, err := netip.ParseAddr(v); err != nil {
		if i := strings.LastIndexByte(v, ':'); i >= 0 && allDigits(v[i+1:]) {
			v = v[:i]
		}
	}
	if a, err := netip.ParseAddr(v); err == nil {
		a = a.WithZone("").Unmap()
		n.prefixes = append(n.prefixes, netip.PrefixFrom(a, a.BitLen()))
		return
	}
	v = strings.TrimPrefix(v, "*")
	v = strings.TrimSuffix(strings.TrimPrefix(v, "."), ".")
	if v != "" {
		n.suffixes = append(n.suffixes, v)
	}
}

// Bypass reports whether a connection to host (canonical: lower-case, IPv6
// without brackets) goes direct. Loopback destinations — "localhost", names
// under ".localhost", 127.0.0.0/8 and ::1 — always do. An IP-literal host is
// matched against the CIDR and IP entries only, never against domain
// suffixes.
func (n *NoProxy) Bypass(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.WithZone("").Unmap()
		if a.IsLoopback() {
			return true
		}
		if n == nil {
			return false
		}
		if n.all {
			return true
		}
		for _, p := range n.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if n == nil {
		return false
	}
	if n.all {
		return true
	}
	for _, s := range n.suffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return false
}

// unmapPrefix stores an IPv4-mapped IPv6 range as the IPv4 range it covers.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr().WithZone("")
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return netip.PrefixFrom(a, p.Bits()).Masked()
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
