// Package rules is the settings' request options (Rules), which hold for
// every request srt-proxy serves whatever way it came, and the two checks
// they name: whether a Host header names the destination
// (Rules.HostMismatch) and which spelling of an ambiguous request-target
// is asked about and forwarded (TargetMode.Resolve).
package rules

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// Rules are the request options of the settings (network.refuseOpaqueTunnels,
// requireHostMatch, ambiguousRequestTarget, stripResponseHeaders,
// allowPlaintextHeaderSet; §5.3, §5.4). They hold for every request the
// server handles, whatever way it came: inside TLS-terminated tunnels (in
// both modes), and in srt's own mode also for plain-HTTP requests, CONNECTs
// that are not terminated and SOCKS5 tunnels. Proxy-only mode sets its
// fixed policy with them (refuse opaque tunnels, require host match,
// targets as spelled).
//
// Set them on proxy.Server.Rules before the first Serve and do not change
// them afterwards. The zero value is the reference's default: nothing
// refused, stripped or allowed beyond the decider's verdicts, ambiguous
// targets refused inside terminated tunnels.
type Rules struct {
	// RefuseOpaqueTunnels refuses every tunnel the proxy cannot inspect: a
	// CONNECT that would not be terminated (no Terminate, or an excluded
	// host) gets 403, a terminated tunnel whose first bytes are not a TLS
	// ClientHello is destroyed, and (srt's mode) a SOCKS5 CONNECT gets
	// reply 0x01. Each refusal comes after the decider allowed the
	// destination, and is told to it (Asker.Refused).
	RefuseOpaqueTunnels bool
	// RequireHostMatch answers 421 when the Host header, the TLS server
	// name or an absolute-form authority names anything but the
	// destination (the CONNECT target, or a plain-HTTP request's URL); the
	// certificate of a terminated tunnel is then always minted for the
	// target.
	RequireHostMatch bool
	// AmbiguousTarget says what to do with a request-target whose
	// normalized form differs from its spelling, inside terminated tunnels
	// and, with CheckPlainTargets, on plain HTTP.
	AmbiguousTarget TargetMode
	// CheckPlainTargets applies AmbiguousTarget to plain-HTTP requests of
	// srt's mode too. srt sets it when the settings name
	// ambiguousRequestTarget; otherwise plain-HTTP targets are forwarded as
	// spelled (srt never checked them, nor does the reference's CLI).
	CheckPlainTargets bool
	// StripResponseHeaders are response header names never returned to
	// the client (case-insensitive, '-', '_' and '.' folded).
	StripResponseHeaders []string
	// PlaintextHeaderSet lets an allow verdict set headers on a plain-HTTP
	// request (cleartext: anyone on the path reads them); without it such
	// an allow is refused (403) and nothing is forwarded.
	PlaintextHeaderSet bool
	// PlaintextInject (--plaintext-inject; srt: credentials.
	// allowPlaintextInject) lets an allow's masked secrets
	// (ask.Verdict.Inject) be put back into plain-HTTP requests too;
	// without it they are put back only inside TLS tunnels the proxy
	// terminates, and a plain-HTTP request goes with its sentinels.
	PlaintextInject bool
	// SigV4Streaming, SigV4Presigned and SigV4A (--sigv4-streaming,
	// --sigv4-presigned, --sigv4a; srt: credentials.sigv4) say what to do
	// with an AWS request made with a masked access key id that the proxy
	// cannot sign again: a streaming-signed body, a presigned URL, a
	// SigV4a signature. The zero value refuses it.
	SigV4Streaming, SigV4Presigned, SigV4A SigV4Mode
}

// SigV4Mode is the value of a sigv4 flag.
type SigV4Mode int

const (
	SigV4Deny        SigV4Mode = iota // refuse the request ("deny", the default)
	SigV4Passthrough                  // forward it as the client signed it ("passthrough")
)

// ParseSigV4Mode reads a sigv4 flag's value: "deny" or "passthrough".
func ParseSigV4Mode(v string) (SigV4Mode, bool) {
	switch v {
	case "deny":
		return SigV4Deny, true
	case "passthrough":
		return SigV4Passthrough, true
	}
	return SigV4Deny, false
}

// TargetMode is the network.ambiguousRequestTarget setting.
type TargetMode int

const (
	TargetRefuse    TargetMode = iota // 400 ambiguous-request-target (the default)
	TargetAsSpelled                   // ask about and forward the target as spelled
	TargetNormalize                   // ask about and forward the normalized target
)

// Resolve applies the mode to a request path: the path to ask about and
// forward, or ok false when the request is refused (an ambiguous path
// under TargetRefuse).
func (m TargetMode) Resolve(path string) (string, bool) {
	norm := http1.NormalizePath(path)
	if norm == path {
		return path, true
	}
	switch m {
	case TargetAsSpelled:
		return path, true
	case TargetNormalize:
		return norm, true
	}
	return "", false
}

// StripSet is the folded names of StripResponseHeaders.
func (r *Rules) StripSet() map[string]bool {
	m := make(map[string]bool, len(r.StripResponseHeaders))
	for _, n := range r.StripResponseHeaders {
		m[http1.FoldName(n)] = true
	}
	return m
}

// HostMismatch returns why a request's Host header does not name the
// destination host:port (defPort for a header without a port) under
// RequireHostMatch, or "". A request without a Host header names nothing,
// and so does one with two.
func (r *Rules) HostMismatch(hosts []string, defPort int, host string, port int) string {
	switch {
	case !r.RequireHostMatch:
		return ""
	case len(hosts) > 1:
		return refusal.WhyTwoHosts
	case len(hosts) == 0 || !http1.NamesTarget(hosts[0], defPort, host, port):
		return refusal.WhyHostMismatch
	}
	return ""
}
