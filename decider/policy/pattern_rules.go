package policy

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/srt-sandbox/decider/hostname"
)

// The rules of the domain-pattern grammar an entry can break, each saying
// what is wrong and what to write instead. They are formats: a verb stands
// for a part of the entry or a suggestion drawn from it. PatternRules lists
// them for tests that require each to be exercised.
const (
	ruleEmpty        = `is empty: write a domain ("example.com"), a wildcard ("*.example.com") or an IP address`
	ruleScheme       = `has a scheme: write the host alone (%q)`
	rulePath         = `has a path (%q): write the host alone (%q)`
	ruleRangeAllow   = `is an address range: these lists name single addresses; list the ones to allow`
	ruleRangeDeny    = `is an address range: these lists name single addresses; to refuse every address of a range, put it in network.deniedResolvedAddresses`
	ruleColons       = `has two colons or more: write an IPv6 address in brackets ("[2001:db8::1]", or "[2001:db8::1]:443" with a port)`
	ruleNoClose      = `has "[" but no "]": write an IPv6 address in brackets ("[2001:db8::1]")`
	ruleAfterBracket = `has %q after "]": only ":" and a port may follow the brackets`
	ruleBracketedV4  = `has an IPv4 address in brackets, which hold IPv6 addresses only: write %q`
	ruleBracketedNot = `has %q in brackets, which is not an IPv6 address: brackets hold IPv6 addresses only`
	rulePortEmpty    = `ends in ":" without a port: write a port (1-65535) after it, or drop the ":" for every port`
	rulePortText     = `has %q after ":", which is not a port: a port is a number from 1 to 65535`
	rulePortZero     = `has port 0: a port is 1-65535; drop ":0" to cover every port`
	rulePortZeros    = `has port %q with a leading zero: write %q`
	rulePortHigh     = `has port %s: a port is 1-65535`
	rulePortHostOnly = `has a port (%q), which this list does not take: write %q`
	ruleNoHost       = `has no host before the port`
	ruleStar         = `would match every host, and only deniedDomains takes a bare "*": list the domains one by one`
	ruleNonASCII     = `has non-ASCII characters: write the name in its ASCII form, "xn--…" (as "idn2 %s" prints it)`
	ruleChar         = `contains %q, which no host name has: a name is letters, digits, "-", "_" and dots`
	ruleTrailingDot  = `ends in ".": write it without the trailing dot (%q); it matches the host written either way`
	ruleLeadingDot   = `starts with ".": write %q for the domain itself and "*.%s" for its subdomains`
	ruleStarPlace    = `has "*" elsewhere than as the whole first label: a wildcard is written "*.example.com" and matches the subdomains of example.com`
	ruleTooBroad     = `is too broad: a wildcard needs two labels or more after "*." ("*.example.com")`
	ruleEmptyLabel   = `has an empty label (".."): remove the extra dot`
	ruleTooLong      = `is longer than 255 characters, which no host name is`
	ruleOneLabel     = `has no dot: "localhost" is the only one-label name these lists take; write the full name (as in "intranet.example.com")`
	ruleShorthand    = `is the IPv4 address %s in shorthand (a name whose last label is a number is read as an address): write %q`
	ruleNumericLast  = `ends in a numeric label (%q): such a host is read as an IPv4 address, and this one is not a valid address, so no destination can match it`
)

// PatternRules lists the rule formats a *PatternError can give.
var PatternRules = []string{
	ruleEmpty, ruleScheme, rulePath, ruleRangeAllow, ruleRangeDeny, ruleColons,
	ruleNoClose, ruleAfterBracket, ruleBracketedV4, ruleBracketedNot,
	rulePortEmpty, rulePortText, rulePortZero, rulePortZeros, rulePortHigh,
	rulePortHostOnly, ruleNoHost, ruleStar, ruleNonASCII, ruleChar,
	ruleTrailingDot, ruleLeadingDot, ruleStarPlace, ruleTooBroad,
	ruleEmptyLabel, ruleTooLong, ruleOneLabel, ruleShorthand, ruleNumericLast,
}

// diagnose says which rule of the grammar s breaks, for an entry that
// parsePattern refused: the rule is the first that applies, in the order
// parsePattern applies them. "" when none does (no such entry is known).
func diagnose(s string, deny bool) string {
	switch {
	case s == "":
		return ruleEmpty
	case strings.Contains(s, "://"):
		host, _, _ := strings.Cut(s[strings.Index(s, "://")+3:], "/")
		return fmt.Sprintf(ruleScheme, host)
	case strings.HasPrefix(s, "["):
		return diagnoseBracketed(s)
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if _, err := netip.ParsePrefix(s); err == nil {
			if deny {
				return ruleRangeDeny
			}
			return ruleRangeAllow
		}
		return fmt.Sprintf(rulePath, s[i:], s[:i])
	}
	host, port, hasPort := strings.Cut(s, ":")
	if strings.Contains(port, ":") {
		return ruleColons
	}
	if hasPort {
		if r := diagnosePort(port); r != "" {
			return r
		}
	}
	suffix := ""
	if hasPort {
		suffix = ":" + port
	}
	return diagnoseHost(host, suffix, deny)
}

// diagnosePort says which rule the text after a ":" breaks, or "".
func diagnosePort(s string) string {
	if _, ok := parsePort(s); ok {
		return ""
	}
	switch {
	case s == "":
		return rulePortEmpty
	case strings.Trim(s, "0123456789") != "":
		return fmt.Sprintf(rulePortText, ":"+s)
	case strings.Trim(s, "0") == "":
		return rulePortZero
	case s[0] == '0':
		if t := strings.TrimLeft(s, "0"); len(t) <= 5 {
			if _, ok := parsePort(t); ok {
				return fmt.Sprintf(rulePortZeros, s, t)
			}
		}
	}
	return fmt.Sprintf(rulePortHigh, s)
}

// diagnoseBracketed is diagnose for an entry that starts with "[".
func diagnoseBracketed(s string) string {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return ruleNoClose
	}
	inner, rest := s[1:end], s[end+1:]
	if rest != "" {
		port, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return fmt.Sprintf(ruleAfterBracket, rest)
		}
		if r := diagnosePort(port); r != "" {
			return r
		}
	}
	if i := strings.IndexByte(inner, '%'); i >= 0 {
		inner = inner[:i]
	}
	if a, err := netip.ParseAddr(inner); err == nil && a.Is4() {
		return fmt.Sprintf(ruleBracketedV4, a.String()+rest)
	}
	return fmt.Sprintf(ruleBracketedNot, inner)
}

// diagnoseHost is diagnose for the host part of an entry; suffix is its
// valid ":port", or "".
func diagnoseHost(host, suffix string, deny bool) string {
	switch {
	case host == "":
		return ruleNoHost
	case host == "*" && !deny:
		return ruleStar
	case !utf8.ValidString(host) || strings.IndexFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0:
		return fmt.Sprintf(ruleNonASCII, host)
	}
	for i := 0; i < len(host); i++ {
		if !hostname.IsNameByte(host[i]) && host[i] != '*' {
			return fmt.Sprintf(ruleChar, host[i:i+1])
		}
	}
	h := hostname.LowerASCII(host)
	switch {
	case strings.HasSuffix(h, ".") && h != "." && !strings.HasSuffix(h, ".."):
		t := strings.TrimSuffix(host, ".")
		if _, ok := parsePattern(t+suffix, deny); !ok {
			return diagnoseHost(t, suffix, deny) // what else is wrong
		}
		return fmt.Sprintf(ruleTrailingDot, t+suffix)
	case strings.HasPrefix(h, ".") && len(h) > 1 && h[1] != '.':
		return fmt.Sprintf(ruleLeadingDot, host[1:], host[1:])
	}
	name, limit := h, maxNameLen
	if base, ok := strings.CutPrefix(h, "*."); ok {
		name, limit = base, maxNameLen-2
		if !strings.Contains(base, "*") && !strings.Contains(base, ".") {
			return ruleTooBroad
		}
	}
	switch {
	case strings.Contains(name, "*"):
		return ruleStarPlace
	case strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
		return ruleEmptyLabel
	case len(name) > limit:
		return ruleTooLong
	case !strings.Contains(name, "."):
		return ruleOneLabel
	case hostname.EndsInNumber(name):
		if a, ok := hostname.ParseIPv4Shorthand(name); ok && name == h {
			return fmt.Sprintf(ruleShorthand, a, a.String()+suffix)
		}
		return fmt.Sprintf(ruleNumericLast, name[strings.LastIndexByte(name, '.')+1:])
	}
	return ""
}
