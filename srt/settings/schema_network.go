package settings

import (
	"net/url"
	"strings"

	"github.com/srt-sandbox/decider/policy"
)

// The reference's domain-pattern messages. The allow list and the deny list
// add a sentence each; lists that take no port (excludeDomains,
// mitmProxy.domains, injectHosts) use the bare message.
const (
	patternMessage      = `Invalid domain pattern. Must be a valid domain (e.g., "example.com"), a wildcard (e.g., "*.example.com"), or a bracketed IPv6 literal (e.g., "[::1]", "[2001:db8::1]:443"). Overly broad patterns like "*.com" or "*" are not allowed for security reasons.`
	allowPatternMessage = patternMessage + ` An optional ":port" suffix (1-65535) restricts the entry to that port.`
	denyPatternMessage  = patternMessage + ` In deniedDomains a bare "*" (deny-all) is also accepted, and an optional ":port" suffix (1-65535) restricts the entry to that port.`
	machLookupMessage   = `Wildcards are only allowed as a single trailing "*" (e.g., "com.example.*" or "*" for all services).`
)

func (c *checker) network(p path, v *value, cfg *Config, root *value) {
	n := &cfg.Network
	var allowed, denied []policy.Pattern
	c.object(p, v, []field{
		{name: "allowedDomains", required: true, check: func(p path, v *value) {
			n.AllowedDomains, allowed = c.patterns(p, v, policy.ParseAllowPattern, allowPatternMessage)
		}},
		{name: "deniedDomains", required: true, check: func(p path, v *value) {
			n.DeniedDomains, denied = c.patterns(p, v, policy.ParseDenyPattern, denyPatternMessage)
		}},
		{name: "deniedDomainReasons", check: func(p path, v *value) {
			n.DeniedDomainReasons = map[string]string{}
			c.record(p, v, func(p path, v *value) {
				if s, ok := c.nonEmptyStr(p, v); ok {
					n.DeniedDomainReasons[p[len(p)-1]] = s
				}
			})
		}},
		{name: "strictAllowlist", check: func(p path, v *value) { n.StrictAllowlist, _ = c.boolean(p, v) }},
		{name: "deniedResolvedAddresses", check: func(p path, v *value) {
			arr, ok := c.array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				s, ok := c.str(p.idx(i), e)
				if !ok {
					continue
				}
				pfx, err := policy.ParseAddressRange(s)
				if err != nil {
					c.add(p.idx(i), "%s", err.Error())
					continue
				}
				n.DeniedResolvedAddresses = append(n.DeniedResolvedAddresses, pfx)
			}
		}},
		{name: "allowUnixSockets", ignored: "macOS only; Linux blocks or allows all Unix sockets", check: func(p path, v *value) { c.strings(p, v, false) }},
		{name: "allowAllUnixSockets", check: func(p path, v *value) { n.AllowAllUnixSockets, _ = c.boolean(p, v) }},
		{name: "allowLocalBinding", ignored: "macOS and Windows only; on Linux the sandbox has its own loopback", check: func(p path, v *value) { c.boolean(p, v) }},
		{name: "allowMachLookup", ignored: "macOS only", check: c.machLookup},
		{name: "httpProxyPort", check: func(p path, v *value) { n.HTTPProxyPort, _ = c.integer(p, v, 1, 65535) }},
		{name: "socksProxyPort", check: func(p path, v *value) { n.SOCKSProxyPort, _ = c.integer(p, v, 1, 65535) }},
		{name: "mitmProxy", check: func(p path, v *value) {
			m := &MitmProxy{}
			c.object(p, v, []field{
				{name: "socketPath", required: true, check: func(p path, v *value) { m.SocketPath, _ = c.nonEmptyStr(p, v) }},
				{name: "domains", required: true, check: func(p path, v *value) {
					if arr, ok := c.array(p, v); ok && len(arr) == 0 {
						c.add(p, "Array must contain at least 1 element(s)")
						return
					}
					_, m.Domains = c.patterns(p, v, parseHostPattern, patternMessage)
				}},
			})
			n.MitmProxy = m
		}},
		{name: "parentProxy", check: func(p path, v *value) {
			pp := &ParentProxy{}
			c.object(p, v, []field{
				{name: "http", check: func(p path, v *value) { pp.HTTP, _ = c.url(p, v) }},
				{name: "https", check: func(p path, v *value) { pp.HTTPS, _ = c.url(p, v) }},
				{name: "noProxy", check: func(p path, v *value) { pp.NoProxy, _ = c.str(p, v) }},
			})
			n.ParentProxy = pp
		}},
		{name: "filterRequest", check: func(p path, v *value) {
			c.add(p, "Expected function, received %s: a request filter is a callback of the Go library and cannot be given in a settings file", v.kind)
		}},
		{name: "allowPlaintextHeaderSet", check: func(p path, v *value) { n.AllowPlaintextHeaderSet, _ = c.boolean(p, v) }},
		{name: "stripResponseHeaders", check: func(p path, v *value) { n.StripResponseHeaders, _ = c.strings(p, v, true) }},
		{name: "refuseOpaqueTunnels", check: func(p path, v *value) { n.RefuseOpaqueTunnels, _ = c.boolean(p, v) }},
		{name: "requireHostMatch", check: func(p path, v *value) { n.RequireHostMatch, _ = c.boolean(p, v) }},
		{name: "ambiguousRequestTarget", check: func(p path, v *value) {
			if s, ok := c.enum(p, v, "refuse", "asSpelled", "normalize"); ok {
				n.AmbiguousRequestTarget = s
			}
		}},
		{name: "tlsTerminate", check: func(p path, v *value) { n.TLSTerminate = c.tlsTerminate(p, v) }},
	})
	n.Lists = &policy.Lists{Allowed: allowed, Denied: denied, DeniedReasons: n.DeniedDomainReasons, Strict: n.StrictAllowlist}
	c.externalProxy(p, v, n)
}

// patterns checks a list of domain patterns with parse.
func (c *checker) patterns(p path, v *value, parse func(string) (policy.Pattern, error), msg string) ([]string, []policy.Pattern) {
	arr, ok := c.array(p, v)
	if !ok {
		return nil, nil
	}
	var raw []string
	var pats []policy.Pattern
	for i, e := range arr {
		s, ok := c.str(p.idx(i), e)
		if !ok {
			continue
		}
		pat, err := parse(s)
		if err != nil {
			c.add(p.idx(i), "%s", msg)
			continue
		}
		raw = append(raw, s)
		pats = append(pats, pat)
	}
	return raw, pats
}

// parseHostPattern is the grammar of lists that name hosts without ports.
func parseHostPattern(s string) (policy.Pattern, error) {
	pat, err := policy.ParseAllowPattern(s)
	if err == nil && pat.Port() != 0 {
		return policy.Pattern{}, &policy.PatternError{Entry: s}
	}
	return pat, err
}

func (c *checker) url(p path, v *value) (string, bool) {
	s, ok := c.str(p, v)
	if !ok {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		c.add(p, "Invalid url")
		return "", false
	}
	return s, true
}

func (c *checker) machLookup(p path, v *value) {
	names, _ := c.strings(p, v, false)
	arr := v.arr
	for i, s := range names {
		if i >= len(arr) || arr[i].kind != kindString {
			continue
		}
		if k := strings.Index(s, "*"); k >= 0 && k != len(s)-1 {
			c.add(p.idx(i), "%s", machLookupMessage)
		}
	}
}

func (c *checker) tlsTerminate(p path, v *value) *TLSTerminate {
	t := &TLSTerminate{MaxTunnels: 256, HandshakeTimeoutMs: 10000}
	ok := c.object(p, v, []field{
		{name: "caCertPath", check: func(p path, v *value) { t.CACertPath, _ = c.nonEmptyStr(p, v) }},
		{name: "caKeyPath", check: func(p path, v *value) { t.CAKeyPath, _ = c.nonEmptyStr(p, v) }},
		{name: "excludeDomains", check: func(p path, v *value) {
			_, t.ExcludeDomains = c.patterns(p, v, parseHostPattern, patternMessage)
		}},
		{name: "extraCaCertPaths", check: func(p path, v *value) { t.ExtraCACertPaths, _ = c.strings(p, v, true) }},
		{name: "maxTunnels", check: func(p path, v *value) {
			if n, ok := c.integer(p, v, 1, 65536); ok {
				t.MaxTunnels = n
			}
		}},
		{name: "handshakeTimeoutMs", check: func(p path, v *value) {
			if n, ok := c.integer(p, v, 100, 600000); ok {
				t.HandshakeTimeoutMs = n
			}
		}},
	})
	if ok && (v.get("caCertPath") == nil) != (v.get("caKeyPath") == nil) {
		c.add(p, "caCertPath and caKeyPath must be provided together")
	}
	return t
}
