package settings

import (
	"net/url"
	"strings"
	"time"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/settingsfile"
	"github.com/srt-sandbox/decider/srtlink"
)

// The domain-pattern messages (the reference's) are settingsfile's, which
// checks the network keys the decider applies.
const (
	patternMessage    = settingsfile.PatternMessage
	machLookupMessage = `Wildcards are only allowed as a single trailing "*" (e.g., "com.example.*" or "*" for all services).`
)

// network checks the network block: the decider's keys (settingsfile),
// then the keys of srt's sandbox and of its own proxy.
func (c *checker) network(p path, v *value, cfg *Config, root *value) {
	n := &cfg.Network
	c.NetworkObject(p, v, &n.Network, withKeys("network", []field{
		{Name: "allowUnixSockets", Check: func(p path, v *value) {
			list, _ := c.Strings(p, v, false)
			for i, e := range list {
				if !strings.HasPrefix(e, "/") && !strings.HasPrefix(e, "~/") {
					c.Add(p.Idx(i), "A Unix socket path must be absolute or start with ~/ (got %q)", e)
					continue
				}
				n.AllowUnixSockets = append(n.AllowUnixSockets, e)
			}
		}},
		{Name: "allowAllUnixSockets", Check: func(p path, v *value) { n.AllowAllUnixSockets, _ = c.Boolean(p, v) }},
		{Name: "allowLocalBinding", Check: func(p path, v *value) { n.AllowLocalBinding, _ = c.Boolean(p, v) }},
		{Name: "allowMachLookup", Check: func(p path, v *value) { cfg.MacOS.AllowMachLookup = c.machLookup(p, v) }},
		{Name: "httpProxyPort", Check: func(p path, v *value) { n.HTTPProxyPort, _ = c.Integer(p, v, 1, 65535) }},
		{Name: "socksProxyPort", Check: func(p path, v *value) { n.SOCKSProxyPort, _ = c.Integer(p, v, 1, 65535) }},
		{Name: "mitmProxy", Check: func(p path, v *value) {
			m := &MitmProxy{}
			c.Object(p, v, []field{
				{Name: "socketPath", Required: true, Check: func(p path, v *value) { m.SocketPath, _ = c.NonEmptyStr(p, v) }},
				{Name: "domains", Required: true, Check: func(p path, v *value) {
					if arr, ok := c.Array(p, v); ok && len(arr) == 0 {
						c.Add(p, "Array must contain at least 1 element(s)")
						return
					}
					_, m.Domains = c.Patterns(p, v, policy.ParseHostPattern, patternMessage)
				}},
			})
			n.MitmProxy = m
		}},
		{Name: "parentProxy", Check: func(p path, v *value) {
			pp := &ParentProxy{}
			c.Object(p, v, []field{
				{Name: "http", Check: func(p path, v *value) { pp.HTTP, _ = c.url(p, v) }},
				{Name: "https", Check: func(p path, v *value) { pp.HTTPS, _ = c.url(p, v) }},
				{Name: "noProxy", Check: func(p path, v *value) { pp.NoProxy, _ = c.Str(p, v) }},
			})
			n.ParentProxy = pp
		}},
		{Name: "filterRequest", Check: func(p path, v *value) {
			c.Add(p, "Expected function, received %s: a request filter is a callback of the Go library and cannot be given in a settings file", v.Kind)
		}},
		{Name: "allowPlaintextHeaderSet", Check: func(p path, v *value) { n.AllowPlaintextHeaderSet, _ = c.Boolean(p, v) }},
		{Name: "stripResponseHeaders", Check: func(p path, v *value) { n.StripResponseHeaders, _ = c.Strings(p, v, true) }},
		{Name: "refuseOpaqueTunnels", Check: func(p path, v *value) { n.RefuseOpaqueTunnels, _ = c.Boolean(p, v) }},
		{Name: "requireHostMatch", Check: func(p path, v *value) { n.RequireHostMatch, _ = c.Boolean(p, v) }},
		{Name: "ambiguousRequestTarget", Check: func(p path, v *value) {
			if s, ok := c.Enum(p, v, srtlink.AmbiguousTargets...); ok {
				n.AmbiguousRequestTarget = s
			}
		}},
		{Name: "tlsTerminate", Check: func(p path, v *value) { n.TLSTerminate = c.tlsTerminate(p, v) }},
		{Name: "exposeLoopbackPorts", Check: func(p path, v *value) { n.ExposeLoopbackPorts = c.exposePorts(p, v) }},
	}))
	if v != nil && v.Kind == kindObject && v.Get("tlsTerminate") != nil && v.Get("mitmProxy") != nil {
		// The reference's message: srt-proxy would terminate the TLS the
		// MITM proxy is there to see.
		c.Add(p.Key("mitmProxy"), "network.tlsTerminate and network.mitmProxy are mutually exclusive")
	}
	c.externalProxy(p, v, n)
}

// reservedPorts are srt's own listeners on the sandbox's loopback, which
// no server inside can have, with what each is.
var reservedPorts = []struct {
	port int
	what string
}{{3128, "srt's HTTP proxy port"}, {1080, "srt's SOCKS proxy port"}, {3129, "srt's capture port"}, {53, "the sandbox's name server's port"}}

// ReservedPorts are the ports of srt's own listeners on the sandbox's
// loopback: never exposed to the host.
func ReservedPorts() []int {
	ports := make([]int, len(reservedPorts))
	for i, r := range reservedPorts {
		ports[i] = r.port
	}
	return ports
}

// reservedPort says what port n is inside the sandbox, or "" when it is
// none of srt's.
func reservedPort(n int) string {
	for _, r := range reservedPorts {
		if r.port == n {
			return r.what
		}
	}
	return ""
}

// exposePorts checks network.exposeLoopbackPorts: ports 1–65535, each
// once, none of srt's own.
func (c *checker) exposePorts(p path, v *value) []int {
	arr, ok := c.Array(p, v)
	if !ok {
		return nil
	}
	ports := []int{}
	seen := map[int]bool{}
	for i, e := range arr {
		n, ok := c.Integer(p.Idx(i), e, 1, 65535)
		switch {
		case !ok:
		case reservedPort(n) != "":
			c.Add(p.Idx(i), "port %d is %s inside the sandbox, which no server there can listen on; expose another port", n, reservedPort(n))
		case seen[n]:
			c.Add(p.Idx(i), "port %d is listed twice", n)
		default:
			seen[n] = true
			ports = append(ports, n)
		}
	}
	return ports
}

func (c *checker) url(p path, v *value) (string, bool) {
	s, ok := c.Str(p, v)
	if !ok {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		c.Add(p, "Invalid url")
		return "", false
	}
	return s, true
}

// machLookup checks network.allowMachLookup and returns its valid names.
func (c *checker) machLookup(p path, v *value) []string {
	names, _ := c.Strings(p, v, false)
	arr := v.Arr
	var out []string
	for i, s := range names {
		if i >= len(arr) || arr[i].Kind != kindString {
			continue
		}
		if k := strings.Index(s, "*"); k >= 0 && k != len(s)-1 {
			c.Add(p.Idx(i), "%s", machLookupMessage)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (c *checker) tlsTerminate(p path, v *value) *TLSTerminate {
	t := &TLSTerminate{MaxTunnels: 256, HandshakeTimeoutMs: 10000}
	ok := c.Object(p, v, []field{
		{Name: "caCertPath", Check: func(p path, v *value) { t.CACertPath, _ = c.NonEmptyStr(p, v) }},
		{Name: "caKeyPath", Check: func(p path, v *value) { t.CAKeyPath, _ = c.NonEmptyStr(p, v) }},
		{Name: "excludeDomains", Check: func(p path, v *value) {
			_, t.ExcludeDomains = c.Patterns(p, v, policy.ParseHostPattern, patternMessage)
		}},
		{Name: "extraCaCertPaths", Check: func(p path, v *value) { t.ExtraCACertPaths, _ = c.Strings(p, v, true) }},
		{Name: "maxTunnels", Check: func(p path, v *value) {
			if n, ok := c.Integer(p, v, srtlink.MinMaxTunnels, srtlink.MaxMaxTunnels); ok {
				t.MaxTunnels = n
			}
		}},
		{Name: "handshakeTimeoutMs", Check: func(p path, v *value) {
			if n, ok := c.Integer(p, v, int64(srtlink.MinHandshakeTimeout/time.Millisecond), int64(srtlink.MaxHandshakeTimeout/time.Millisecond)); ok {
				t.HandshakeTimeoutMs = n
			}
		}},
	})
	if ok && (v.Get("caCertPath") == nil) != (v.Get("caKeyPath") == nil) {
		c.Add(p, "caCertPath and caKeyPath must be provided together")
	}
	return t
}
