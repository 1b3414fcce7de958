package policy

import (
	"net/netip"
	"strings"
)

// ValidEgressEntry reports whether s is an entry of a decider hello's
// allowedDomains / deniedDomains (the reference's isEgressEntry): a
// lower-case DNS name (labels [a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?, at most 253
// bytes, last label starting with a letter), or "*." and such a name of two
// labels or more, or an IPv4 literal, or an IPv6 literal bare or in
// brackets; each but a bare IPv6 literal optionally followed by ":port"
// (1–65535, no leading zero). A bare "*" is not an entry.
//
// Unlike the reference, an IPv6 zone id ("fe80::1%eth0") is refused: it
// means nothing to an egress rule.
func ValidEgressEntry(s string) bool {
	if strings.IndexByte(s, '%') >= 0 {
		return false
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if rest, ok := strings.CutPrefix(s, "["); ok {
		inner, after, ok := strings.Cut(rest, "]")
		if !ok {
			return false
		}
		if after != "" {
			digits, ok := strings.CutPrefix(after, ":")
			if _, valid := parsePort(digits); !ok || !valid {
				return false
			}
		}
		a, err := netip.ParseAddr(inner)
		return err == nil && a.Is6()
	}
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if _, ok := parsePort(s[i+1:]); !ok {
			return false
		}
		host = s[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Is4()
	}
	base, wild := strings.CutPrefix(host, "*.")
	labels := strings.Split(base, ".")
	if base == "" || len(base) > 253 || wild && len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !egressLabel(l) {
			return false
		}
	}
	last := labels[len(labels)-1]
	return 'a' <= last[0] && last[0] <= 'z'
}

// egressLabel matches ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$.
func egressLabel(l string) bool {
	if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
