package refusal

import (
	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// ProxyOnlyMode renders refusals as the reference's `srt proxy` does
// (§2.2): every refusal the proxy or the decider makes carries
// "X-Deny-Reason: <code>" and a text/plain body, the reason and a newline
// for plain HTTP, the bare reason for a CONNECT (written raw and closed).
// An unreachable upstream is a 502 whose code says how it failed
// (upstream_name_not_resolved, …), where the reference's has no code.
type ProxyOnlyMode struct{}

// DenyReasonHeader names the code of a proxy-only refusal.
const DenyReasonHeader = "X-Deny-Reason"

// The X-Deny-Reason codes.
const (
	CodeHostNotAllowed     = "host_not_allowed"
	CodeOpaqueTunnel       = "opaque_tunnel"
	CodeMisdirected        = "misdirected"
	CodeBadRequest         = "bad_request"
	CodeDecider            = "decider"
	CodeDeciderUnavailable = "decider_unavailable"
	CodeBodyless           = "bodyless_method_body"
	CodeMethodRefused      = "method_refused"
	CodePlaintextHeaderSet = "plaintext_header_set"
	CodeAddressNotAllowed  = "address_not_allowed"
	CodeTooManyTunnels     = "too_many_tunnels"
)

// Fixed reasons of proxy-only refusals, compared verbatim by clients.
const (
	WhyPlaintextHeaderSet = "the allow decision sets headers, and headers are not set on plain-HTTP requests unless plaintext header sets are enabled; nothing was forwarded"
	WhyNoHostHeader       = "HTTP/1.1 request without a Host header"
	WhyNotASCII           = "destination host is not plain ASCII"
	WhyMalformedTarget    = "malformed request-target"
	// Request-targets that name no destination, or one spelled in a way
	// the proxy does not forward (the reference says WhyNotASCII of them
	// all).
	WhyOriginForm      = "request-target is in origin form (/path): a proxy needs the absolute form, http://host/path"
	WhyAsteriskForm    = "request-target * names no destination: a proxy needs the absolute form, http://host/path"
	WhyNotHTTPURL      = "request-target is not an http:// or https:// URL"
	WhyUserinfo        = "request-target names a user (user@host), which is not forwarded"
	WhyConnectNoPort   = "CONNECT target has no port: it must be host:port"
	WhyConnectUserinfo = "CONNECT target names a user (user@host): it must be host:port"
	WhyConnectForm     = "CONNECT target is not host:port"
)

// Render implements Mode.
func (ProxyOnlyMode) Render(r Refusal) Answer {
	if a, ok := renderInject(r, DenyReasonHeader, CodeInjectRefused); ok {
		return a
	}
	connect := r.Kind == ask.KindConnect
	answer := func(status int, code, reason string, socks byte) Answer {
		a := Answer{Status: status, Phrase: phraseOf(status), SOCKS: socks,
			Header: [][2]string{{"Content-Type", textPlain}, {DenyReasonHeader, code}}}
		if connect {
			a.Body = reason
		} else {
			a.Body = reason + "\n"
		}
		return a
	}
	switch r.Cause {
	case CauseHostNotAllowed:
		return answer(403, CodeHostNotAllowed, allowlistBody, SOCKSNotAllowed)
	case CauseOpaqueTunnel:
		return answer(403, CodeOpaqueTunnel, WhyOpaqueTunnel, SOCKSNotAllowed)
	case CauseMisdirected:
		return answer(421, CodeMisdirected, r.Reason, SOCKSNotAllowed)
	case CauseBadRequest, CauseMalformed, CauseHeadTooLarge, CauseUnaskable, CauseAmbiguousTarget:
		return answer(400, CodeBadRequest, orText(r.Reason, "malformed request"), SOCKSNotAllowed)
	case CauseDenied, CauseRequestDenied:
		return answer(denyStatus(r.Status), CodeDecider, orText(r.Reason, WhyDeniedDefault), SOCKSNotAllowed)
	case CauseUnavailable:
		return answer(503, CodeDeciderUnavailable, DeciderReason(r.Reason), SOCKSGeneralFailure)
	case CauseBodyless:
		return answer(403, CodeBodyless, ask.ErrBodylessBody.Error(), SOCKSNotAllowed)
	case CauseMethodRefused:
		return answer(405, CodeMethodRefused, r.Reason, SOCKSNotAllowed)
	case CausePlaintextHeaderSet:
		return answer(403, CodePlaintextHeaderSet, WhyPlaintextHeaderSet, SOCKSNotAllowed)
	case CauseAddress:
		a := answer(403, CodeAddressNotAllowed, dial.BlockedMessage(r.Host, r.Reason), SOCKSNotAllowed)
		if connect {
			a.Phrase = sanitize.StatusPhrase(r.Reason)
		}
		return a
	case CauseTooManyTunnels:
		a := answer(503, CodeTooManyTunnels, WhyTooManyTunnels, SOCKSGeneralFailure)
		if connect {
			a.Header = append(a.Header, [2]string{"Connection", "close"})
		}
		return a
	case CauseUnreachable:
		return unreachableAnswer(r, DenyReasonHeader, r.Failure.Code())
	case CauseAuth: // proxy-only mode has no proxy credentials; kept for completeness
		return Answer{Status: 407, Phrase: "Proxy Authentication Required", SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Proxy-Authenticate", `Basic realm="srt"`}}}
	default:
		return Answer{Status: 500, Phrase: "Internal Server Error", SOCKS: SOCKSGeneralFailure,
			Header: [][2]string{{"Content-Type", textPlain}}, Body: "Internal Server Error"}
	}
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
