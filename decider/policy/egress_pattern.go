package policy

import (
	"net/netip"
	"strconv"
	"strings"
)

// ParseEgressPattern parses an entry of a decider hello's lists
// (ValidEgressEntry's grammar) into the Pattern proxy-only mode's host gate
// matches with, as the reference does (matchesDomainPatternWithPort): an
// exact name — one label is enough ("intranet"), unlike the settings
// grammar — a "*." wildcard (strict subdomains), or an IP literal, IPv6
// bare or in brackets; with an optional ":port" except on a bare IPv6
// literal. Anything else is a *PatternError.
func ParseEgressPattern(s string) (Pattern, error) {
	if !ValidEgressEntry(s) {
		return Pattern{}, &PatternError{Entry: s}
	}
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return Pattern{text: s, kind: kindIP, host: a.String(), ip: a}, nil
	}
	if strings.HasPrefix(s, "[") {
		p, ok := parseBracketed(s)
		if !ok {
			return Pattern{}, &PatternError{Entry: s}
		}
		return p, nil
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		port, _ = parsePort(s[i+1:]) // ValidEgressEntry checked it
		host = s[:i]
	}
	p := Pattern{text: s, port: port}
	switch a, err := netip.ParseAddr(host); {
	case err == nil:
		p.kind, p.host, p.ip = kindIP, a.String(), a
	case strings.HasPrefix(host, "*."):
		p.kind, p.host = kindWildcard, host[2:]
	default:
		p.kind, p.host = kindName, host
	}
	return p, nil
}

// EgressLists is the host gate of proxy-only mode, from a decider hello's
// lists: no deniedDomainReasons, no strictAllowlist (a destination on
// neither list is refused all the same). Entries that are not egress
// entries are reported as ParseLists reports them.
func EgressLists(allowed, denied []string) (*Lists, []FieldError) {
	var errs []FieldError
	l := &Lists{}
	for i, s := range allowed {
		p, err := ParseEgressPattern(s)
		if err != nil {
			errs = append(errs, FieldError{Field: FieldAllowedDomains, Index: i, Err: err})
			continue
		}
		l.Allowed = append(l.Allowed, p)
	}
	for i, s := range denied {
		p, err := ParseEgressPattern(s)
		if err != nil {
			errs = append(errs, FieldError{Field: FieldDeniedDomains, Index: i, Err: err})
			continue
		}
		l.Denied = append(l.Denied, p)
	}
	if errs != nil {
		return nil, errs
	}
	return l, nil
}

// EgressEntry is the entry as a decider hello's lists spell it
// (ValidEgressEntry's grammar), matching what the entry matches: the name
// lower-cased, an IPv6 literal in brackets, the port kept. ok is false for
// an entry the hello cannot carry: a bare "*" (deny-all) and a name the
// hello's labels do not admit (an "_" in it, or a last label that starts
// with a digit).
func (p Pattern) EgressEntry() (entry string, ok bool) {
	switch p.kind {
	case kindName:
		entry = p.host
	case kindWildcard:
		entry = "*." + p.host
	case kindIP:
		entry = p.ip.String()
		if p.ip.Is6() {
			entry = "[" + entry + "]"
		}
	default:
		return "", false
	}
	if p.port != 0 {
		entry += ":" + strconv.Itoa(p.port)
	}
	if !ValidEgressEntry(entry) {
		return "", false
	}
	return entry, true
}
