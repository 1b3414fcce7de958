package proxyonly

import (
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// serveConnect serves a CONNECT in proxy-only mode: the target
// must be plain ASCII and pass the host gate; then the tunnel is
// TLS-terminated (proxy.Server.TLS) and each request inside goes to the decider,
// or, without termination, refused: this proxy tunnels nothing it cannot
// inspect. The decider is not asked about the CONNECT itself.
func (m mode) serveConnect(h *forward.Conn, head *http1.RequestHead, rec *serve.Record) {
	refuse := func(c refusal.Cause, why string) {
		h.Refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindConnect, Reason: why, Host: rec.Host}, true)
	}
	if why := connectTargetProblem(head.Target); why != "" {
		refuse(refusal.CauseBadRequest, why)
		return
	}
	host, port, err := http1.ParseConnectTarget(head.Target)
	if err != nil {
		refuse(refusal.CauseBadRequest, refusal.WhyMalformedTarget)
		return
	}
	rec.Host, rec.Port = host, port
	if ok, why := m.gate.Allows(host, port); !ok {
		refuse(refusal.CauseHostNotAllowed, why)
		return
	}
	req := &ask.Request{Kind: ask.KindConnect, Method: "CONNECT", Host: host, Port: port, Path: "*"}
	if m.tls != nil && terminate.ServeConnect(m.tls, h, req, ask.Verdict{Allow: true}, rec) {
		return
	}
	refuse(refusal.CauseOpaqueTunnel, refusal.WhyOpaqueTunnel)
}

// connectTargetProblem says why proxy-only mode does not take a CONNECT
// target as it stands, or "": not host:port (a user named, no port, a
// path or URL), or a host not spelled in plain ASCII
// (asciiConnectTarget).
func connectTargetProblem(target string) string {
	switch {
	case strings.Contains(target, "@"):
		return refusal.WhyConnectUserinfo
	case strings.ContainsAny(target, "/?#") || target == "*":
		return refusal.WhyConnectForm
	}
	port := target
	if strings.HasPrefix(target, "[") {
		port = target[strings.IndexByte(target, ']')+1:] // -1+1: the whole target when unclosed
	}
	if !strings.Contains(port, ":") {
		return refusal.WhyConnectNoPort
	}
	if !asciiConnectTarget(target) {
		return refusal.WhyNotASCII
	}
	return ""
}

// asciiConnectTarget reports whether a CONNECT target is "host:port" with
// the host an IPv6 literal in brackets, an IPv4 address or plain-ASCII
// labels (see asciiAuthority), and the port digits.
func asciiConnectTarget(target string) bool {
	var host, rest string
	if strings.HasPrefix(target, "[") {
		end := strings.IndexByte(target, ']')
		if end < 0 {
			return false
		}
		host, rest = target[:end+1], target[end+1:]
	} else {
		i := strings.IndexByte(target, ':')
		if i < 0 {
			return false
		}
		host, rest = target[:i], target[i:]
		if strings.ContainsAny(host, "[]") {
			return false
		}
	}
	digits, ok := strings.CutPrefix(rest, ":")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	return asciiHost(host)
}
