package refusal

import (
	"net/http"
	"strings"

	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Causes of the refusals TLS termination adds. They are numbered apart
// from the others so that either list can grow. Every Mode renders them;
// SRTMode as below, proxy-only mode with its X-Deny-Reason codes
// (decider, method_refused, misdirected, bad_request, too_many_tunnels,
// opaque_tunnel).
const (
	// CauseRequestDenied: the decider denied one request read inside a
	// terminated tunnel (Status is the verdict's, 400–599, else 403).
	CauseRequestDenied Cause = 64 + iota
	// CauseMethodRefused: TRACE or TRACK, never forwarded (405).
	CauseMethodRefused
	// CauseMisdirected: requireHostMatch found a Host header, TLS server
	// name or request-target authority that does not name the CONNECT
	// target (421).
	CauseMisdirected
	// CauseAmbiguousTarget: the request-target names a different resource
	// spelled and normalized, and ambiguousRequestTarget is "refuse" (400).
	CauseAmbiguousTarget
	// CauseTooManyTunnels: every TLS-terminated tunnel slot is taken (503,
	// a CONNECT answer).
	CauseTooManyTunnels
	// CauseOpaqueTunnel: refuseOpaqueTunnels and a CONNECT that would not
	// be terminated (403, a CONNECT answer), or a SOCKS5 CONNECT (srt's
	// mode: reply 0x01).
	CauseOpaqueTunnel
)

// Refusal phrases of terminated tunnels, compared verbatim by clients.
const (
	WhyTooManyTunnels = "too many TLS-terminated tunnels at once"
	WhyOpaqueTunnel   = "this proxy does not tunnel CONNECTs it cannot inspect"
	WhyNotTLS         = "refuseOpaqueTunnels: the tunnel's first bytes are not a TLS ClientHello"
	WhySOCKSTunnel    = "refuseOpaqueTunnels" // a SOCKS5 CONNECT: the violation reads "deny socks-tunnel h:p (refuseOpaqueTunnels)"
	WhyDeniedDefault  = "denied by sandbox policy"
	WhyAmbiguous      = "ambiguous request-target: as spelled and normalized it names different resources"
	WhyHostMismatch   = "Host header does not match the request target"
	WhySNIMismatch    = "TLS server name does not match the request target"
	WhyAuthMismatch   = "request-target authority does not match the request target"
)

// X-Proxy-Error values of srt's mode for the refusals above.
const (
	tagTooManyTunnels = "too-many-tunnels"
	tagAmbiguous      = "ambiguous-request-target"
	tagMisdirected    = "misdirected-request"
)

// MethodRefused is the reason of a TRACE or TRACK refusal.
func MethodRefused(method string) string {
	return "the " + method + " method is not forwarded"
}

// denyStatus is a deny verdict's status when it is an error status, else
// 403.
func denyStatus(s int) int {
	if s >= 400 && s <= 599 {
		return s
	}
	return 403
}

// renderTLS renders the refusals of TLS termination as the reference's srt
// does (§5.1, §5.3); ok is false for every other cause. A denied request
// inside a terminated tunnel gets the verdict's status,
// X-Proxy-Error: blocked-by-sandbox-runtime and the reason (or "denied by
// sandbox policy") as its body.
func renderTLS(r Refusal) (a Answer, ok bool) {
	connect := r.Kind == ask.KindConnect
	line := func(s string) string {
		if connect {
			return s
		}
		return s + "\n"
	}
	text := func(status int, tag, body string) Answer {
		h := [][2]string{{"Content-Type", textPlain}}
		if tag != "" {
			h = append(h, [2]string{"X-Proxy-Error", tag})
		}
		return Answer{Status: status, Phrase: http.StatusText(status), Header: h, Body: line(body), SOCKS: SOCKSNotAllowed}
	}
	switch r.Cause {
	case CauseRequestDenied:
		reason := sanitize.Line(r.Reason)
		if strings.TrimSpace(reason) == "" {
			reason = WhyDeniedDefault
		}
		return text(denyStatus(r.Status), tagSandboxRuntime, reason), true
	case CauseMethodRefused:
		return text(405, tagSandboxRuntime, r.Reason), true
	case CauseMisdirected:
		return text(421, tagMisdirected, r.Reason), true
	case CauseAmbiguousTarget:
		return text(400, tagAmbiguous, r.Reason), true
	case CauseTooManyTunnels:
		a := text(503, tagTooManyTunnels, WhyTooManyTunnels)
		a.SOCKS = SOCKSGeneralFailure
		return a, true
	case CauseOpaqueTunnel:
		a := text(403, tagSandboxRuntime, WhyOpaqueTunnel)
		a.SOCKS = SOCKSGeneralFailure // §5.4: the reference answers a SOCKS CONNECT "general failure"
		return a, true
	}
	return Answer{}, false
}
