package policy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/srt-sandbox/decider/hostname"
)

// InvalidPatternMessage is the reference's validation message for a bad
// network.allowedDomains entry (and for any other domain-pattern list).
const InvalidPatternMessage = `Invalid domain pattern. Must be a valid domain (e.g., "example.com"), a wildcard (e.g., "*.example.com"), or a bracketed IPv6 literal (e.g., "[::1]", "[2001:db8::1]:443"). Overly broad patterns like "*.com" or "*" are not allowed for security reasons. An optional ":port" suffix (1-65535) restricts the entry to that port.`

// InvalidDenyPatternMessage is the reference's validation message for a bad
// network.deniedDomains entry, whose grammar also admits a bare "*".
const InvalidDenyPatternMessage = `Invalid domain pattern. Must be a valid domain (e.g., "example.com"), a wildcard (e.g., "*.example.com"), or a bracketed IPv6 literal (e.g., "[::1]", "[2001:db8::1]:443"). Overly broad patterns like "*.com" or "*" are not allowed for security reasons. In deniedDomains a bare "*" (deny-all) is also accepted, and an optional ":port" suffix (1-65535) restricts the entry to that port.`

// maxNameLen bounds a name entry; hostname.Canonical refuses longer hosts, so a
// longer entry could never match.
const maxNameLen = 255

// PatternError reports an entry that is not a valid domain pattern: which
// rule of the grammar it broke, and, where the reference refuses it too,
// the reference's fixed text.
type PatternError struct {
	Entry string // the rejected entry
	Deny  bool   // parsed with the deniedDomains grammar
	// Rule is the rule the entry broke and what to write instead (one of
	// PatternRules, filled in); "" when srt cannot say.
	Rule string
	// Beyond: the reference accepts the entry, which srt refuses because
	// no destination could match it; the reference has no message for it.
	Beyond bool
}

func newPatternError(s string, deny bool) *PatternError {
	return &PatternError{Entry: s, Deny: deny, Rule: diagnose(s, deny), Beyond: refAccepts(s, deny)}
}

func (e *PatternError) Error() string {
	if e.Deny {
		return e.Explain(InvalidDenyPatternMessage)
	}
	return e.Explain(InvalidPatternMessage)
}

// Explain is the error's message, with ref as the reference's message for
// the list the entry is in: the entry, the rule it broke, then ref unless
// the reference accepts the entry.
func (e *PatternError) Explain(ref string) string {
	switch {
	case e.Rule == "":
		return ref
	case e.Beyond:
		return quoteEntry(e.Entry) + " " + e.Rule
	}
	return quoteEntry(e.Entry) + " " + e.Rule + ". " + ref
}

// quoteEntry quotes an entry for a message, its first 64 bytes when it
// is longer than 80.
func quoteEntry(s string) string {
	if len(s) <= 80 {
		return strconv.Quote(s)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// ParseAllowPattern parses an allowedDomains entry: "example.com",
// "localhost", "*.example.com", "1.2.3.4", "[2001:db8::1]", each with an
// optional ":port" (1-65535, no leading zero).
//
// It is stricter than the reference in one way: an entry the reference
// accepts but that could never match a canonical destination is refused —
// names with characters outside [A-Za-z0-9_-] (including non-ASCII IDNs;
// write the xn-- form), empty labels, names whose last label is numeric
// ("127.1", "1.2.3.04", "0x7f.0.0.1"; write the dotted quad), and
// non-IPv6 content in brackets ("[1.2.3.4]", "[example.com]").
func ParseAllowPattern(s string) (Pattern, error) {
	p, ok := parsePattern(s, false)
	if !ok {
		return Pattern{}, newPatternError(s, false)
	}
	return p, nil
}

// ParseDenyPattern parses a deniedDomains entry: the allowedDomains grammar
// plus a bare "*" or "*:<port>" (deny-all, optionally for one port).
func ParseDenyPattern(s string) (Pattern, error) {
	p, ok := parsePattern(s, true)
	if !ok {
		return Pattern{}, newPatternError(s, true)
	}
	return p, nil
}

// ParseHostPattern parses an entry of a list that names hosts without a
// port (tlsTerminate.excludeDomains, mitmProxy.domains, injectHosts): the
// allowedDomains grammar without the ":port".
func ParseHostPattern(s string) (Pattern, error) {
	p, err := ParseAllowPattern(s)
	if err == nil && p.Port() != 0 {
		host := s[:strings.LastIndexByte(s, ':')]
		return Pattern{}, &PatternError{Entry: s, Rule: fmt.Sprintf(rulePortHostOnly, s[len(host):], host)}
	}
	if pe, ok := err.(*PatternError); ok {
		pe.Beyond = refValidDomainPattern(s)
	}
	return p, err
}

func parsePattern(s string, deny bool) (Pattern, bool) {
	if s == "" {
		return Pattern{}, false
	}
	if strings.HasPrefix(s, "[") {
		return parseBracketed(s)
	}
	// Two or more colons without brackets is an IPv6 literal whose last
	// group could be read as a port ("2001:db8::1:443"): ambiguous, refused.
	host, port := s, 0
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if strings.IndexByte(s[i+1:], ':') >= 0 {
			return Pattern{}, false
		}
		var ok bool
		if port, ok = parsePort(s[i+1:]); !ok {
			return Pattern{}, false
		}
		host = s[:i]
	}
	p := Pattern{text: s, port: port}
	if deny && host == "*" {
		p.kind, p.host = kindAll, "*"
		return p, true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return Pattern{}, false
		}
		p.kind, p.host, p.ip = kindIP, a.String(), a
		return p, true
	}
	if !isNameText(host) {
		return Pattern{}, false
	}
	h := hostname.LowerASCII(host)
	if h == "localhost" {
		p.kind, p.host = kindName, h
		return p, true
	}
	if base, ok := strings.CutPrefix(h, "*."); ok {
		if !validName(base, maxNameLen-2) || !strings.Contains(base, ".") {
			return Pattern{}, false
		}
		p.kind, p.host = kindWildcard, base
		return p, true
	}
	if !validName(h, maxNameLen) || !strings.Contains(h, ".") {
		return Pattern{}, false
	}
	p.kind, p.host = kindName, h
	return p, true
}

// parseBracketed parses "[v6]" or "[v6]:port". A zone id is dropped and an
// IPv4-mapped address is stored as the IPv4 address it names.
func parseBracketed(s string) (Pattern, bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Pattern{}, false
	}
	inner, rest := s[1:end], s[end+1:]
	port := 0
	if rest != "" {
		digits, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return Pattern{}, false
		}
		if port, ok = parsePort(digits); !ok {
			return Pattern{}, false
		}
	}
	if i := strings.IndexByte(inner, '%'); i >= 0 {
		inner = inner[:i]
	}
	a, err := netip.ParseAddr(inner)
	if err != nil || !a.Is6() {
		return Pattern{}, false
	}
	a = a.Unmap()
	return Pattern{text: s, kind: kindIP, host: a.String(), ip: a, port: port}, true
}

// parsePort accepts ^[1-9][0-9]{0,4}$ up to 65535.
func parsePort(s string) (int, bool) {
	if len(s) == 0 || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 65535
}

// isNameText reports whether s uses only the characters a wildcard or name
// entry may contain before validation proper: [A-Za-z0-9._-] and '*'.
func isNameText(s string) bool {
	for i := 0; i < len(s); i++ {
		if !hostname.IsNameByte(s[i]) && s[i] != '*' {
			return false
		}
	}
	return true
}

// validName reports whether a lower-case s is a DNS name a destination can
// canonically be: non-empty labels of [a-z0-9_-], at most max bytes, and a
// last label that is not numeric (such a host is read as an IPv4 address).
func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return !hostname.EndsInNumber(s)
}
