package policy

import (
	"net/netip"
	"strings"
)

// The reference's checks of a domain-pattern entry (sandbox-runtime 0.0.83,
// domain-pattern.js and sandbox-config.js), ported only to tell whether the
// reference refuses an entry that srt refuses: then srt's message keeps
// the reference's text after srt's rule. srt's own grammar (parsePattern)
// is stricter; these functions decide nothing else.

// refAccepts says whether the reference accepts s in allowedDomains, or,
// with deny, in deniedDomains (isValidAllowedDomainEntry,
// deniedDomainPatternSchema).
func refAccepts(s string, deny bool) bool {
	if first := strings.IndexByte(s, ':'); first >= 0 && strings.IndexByte(s[first+1:], ':') >= 0 && !strings.HasPrefix(s, "[") {
		return false // hasValidIpv6Bracketing
	}
	host := refHostPattern(s)
	return deny && host == "*" || refValidDomainPattern(host)
}

// refHostPattern is splitDomainPatternPort's host part.
func refHostPattern(s string) string {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return s
		}
		inner := s[1:end]
		if i := strings.IndexByte(inner, '%'); i >= 0 {
			inner = inner[:i]
		}
		host := inner
		if a, err := netip.ParseAddr(inner); err == nil {
			host = a.Unmap().String()
		}
		if rest := s[end+1:]; rest != "" {
			if port, ok := strings.CutPrefix(rest, ":"); !ok || !validPort(port) {
				return s
			}
		}
		return host
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || !validPort(s[i+1:]) {
		return s
	}
	return s[:i]
}

func validPort(s string) bool { _, ok := parsePort(s); return ok }

// refValidDomainPattern is isValidDomainPattern, the check of a host part
// (and the whole check of mitmProxy.domains, excludeDomains and
// injectHosts entries).
func refValidDomainPattern(v string) bool {
	if a, err := netip.ParseAddr(v); err == nil && a.Is6() {
		return true
	}
	if strings.Contains(v, "/") || strings.Contains(v, ":") {
		return false
	}
	if v == "localhost" {
		return true
	}
	if d, ok := strings.CutPrefix(v, "*."); ok {
		if !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			return false
		}
		return !strings.Contains(d, "..")
	}
	if strings.Contains(v, "*") {
		return false
	}
	return strings.Contains(v, ".") && !strings.HasPrefix(v, ".") && !strings.HasSuffix(v, ".")
}
