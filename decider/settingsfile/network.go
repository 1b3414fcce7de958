package settingsfile

import (
	"errors"
	"net/netip"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
)

// The reference's domain-pattern messages. The allow list and the deny list
// add a sentence each; lists that take no port (excludeDomains,
// mitmProxy.domains, injectHosts) use the bare message.
const (
	PatternMessage      = `Invalid domain pattern. Must be a valid domain (e.g., "example.com"), a wildcard (e.g., "*.example.com"), or a bracketed IPv6 literal (e.g., "[::1]", "[2001:db8::1]:443"). Overly broad patterns like "*.com" or "*" are not allowed for security reasons.`
	AllowPatternMessage = PatternMessage + ` An optional ":port" suffix (1-65535) restricts the entry to that port.`
	DenyPatternMessage  = PatternMessage + ` In deniedDomains a bare "*" (deny-all) is also accepted, and an optional ":port" suffix (1-65535) restricts the entry to that port.`
)

// Network is the part of the settings' network block the decider applies.
type Network struct {
	AllowedDomains      []string
	DeniedDomains       []string
	DeniedDomainReasons map[string]string
	// Lists is AllowedDomains, DeniedDomains, DeniedDomainReasons and
	// StrictAllowlist parsed.
	Lists                   *policy.Lists
	StrictAllowlist         bool
	DeniedResolvedAddresses []netip.Prefix
}

// NetworkObject checks the network block at p into n: the decider's keys,
// and the fields of more (the keys of srt's sandbox and proxy for srt; a
// refusal of each for the decider). It sets n.Lists from what it found and
// returns whether v is an object.
func (c *Checker) NetworkObject(p Path, v *Value, n *Network, more []Field) bool {
	var allowed, denied []policy.Pattern
	fields := []Field{
		{Name: "allowedDomains", Required: true, Check: func(p Path, v *Value) {
			n.AllowedDomains, allowed = c.Patterns(p, v, policy.ParseAllowPattern, AllowPatternMessage)
		}},
		{Name: "deniedDomains", Required: true, Check: func(p Path, v *Value) {
			n.DeniedDomains, denied = c.Patterns(p, v, policy.ParseDenyPattern, DenyPatternMessage)
		}},
		{Name: "deniedDomainReasons", Check: func(p Path, v *Value) {
			n.DeniedDomainReasons = map[string]string{}
			c.Record(p, v, func(p Path, v *Value) {
				if s, ok := c.NonEmptyStr(p, v); ok {
					n.DeniedDomainReasons[p[len(p)-1]] = s
				}
			})
		}},
		{Name: "strictAllowlist", Check: func(p Path, v *Value) { n.StrictAllowlist, _ = c.Boolean(p, v) }},
		{Name: "deniedResolvedAddresses", Check: func(p Path, v *Value) {
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				s, ok := c.Str(p.Idx(i), e)
				if !ok {
					continue
				}
				pfx, err := policy.ParseAddressRange(s)
				if err != nil {
					c.Add(p.Idx(i), "%s", err.Error())
					continue
				}
				n.DeniedResolvedAddresses = append(n.DeniedResolvedAddresses, pfx)
			}
		}},
	}
	ok := c.Object(p, v, append(fields, more...))
	n.Lists = &policy.Lists{Allowed: allowed, Denied: denied, DeniedReasons: n.DeniedDomainReasons, Strict: n.StrictAllowlist}
	return ok
}

// Patterns checks a list of domain patterns with parse; msg is the
// reference's message for an entry parse refuses, which follows the rule
// the entry broke where the reference refuses it too (PatternIssue).
func (c *Checker) Patterns(p Path, v *Value, parse func(string) (policy.Pattern, error), msg string) ([]string, []policy.Pattern) {
	arr, ok := c.Array(p, v)
	if !ok {
		return nil, nil
	}
	var raw []string
	var pats []policy.Pattern
	for i, e := range arr {
		s, ok := c.Str(p.Idx(i), e)
		if !ok {
			continue
		}
		pat, err := parse(s)
		if err != nil {
			c.Add(p.Idx(i), "%s", PatternIssue(err, msg))
			continue
		}
		raw = append(raw, s)
		pats = append(pats, pat)
	}
	return raw, pats
}

// PatternIssue is the message of an entry a pattern parser refused: the
// rule it broke and, where the reference refuses the entry too, msg, the
// reference's message for the list.
func PatternIssue(err error, msg string) string {
	var pe *policy.PatternError
	if errors.As(err, &pe) {
		return pe.Explain(msg)
	}
	return msg
}

// Control is the block as the decider's engine takes it (decider/control's
// Network, which srt sends the decider it starts): the lists as written,
// never nil, and the address ranges in their canonical text.
func (n *Network) Control() *control.Network {
	out := &control.Network{
		AllowedDomains: n.AllowedDomains, DeniedDomains: n.DeniedDomains,
		DeniedDomainReasons: n.DeniedDomainReasons, StrictAllowlist: n.StrictAllowlist,
	}
	if out.AllowedDomains == nil {
		out.AllowedDomains = []string{}
	}
	if out.DeniedDomains == nil {
		out.DeniedDomains = []string{}
	}
	for _, p := range n.DeniedResolvedAddresses {
		out.DeniedResolvedAddresses = append(out.DeniedResolvedAddresses, p.String())
	}
	return out
}
