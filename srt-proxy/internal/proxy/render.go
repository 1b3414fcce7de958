package proxy

import (
	"strings"

	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Cause says why the proxy answers a request itself instead of forwarding
// it.
type Cause int

const (
	CauseDenied       Cause = iota + 1 // the decider denied
	CauseAddress                       // allowed, but the name resolved only to refused addresses
	CauseUnreachable                   // allowed, but the upstream could not be reached
	CauseUnavailable                   // the decider is unavailable (fail closed)
	CauseAuth                          // proxy credentials missing or wrong
	CauseMalformed                     // the request head or its target cannot be parsed
	CauseHeadTooLarge                  // the request head is over the limit
	CauseUnaskable                     // the request cannot be put to the decider (protocol limits)
	CauseInternal                      // the proxy failed

	// Refusals of proxy-only mode's fixed policy (§2.2). Every Mode renders
	// them: SRTMode as in srt's own mode, ProxyOnlyMode with its codes.
	// (TLS termination's causes, shared by both modes, are in
	// terminate_render.go.)
	CauseHostNotAllowed     // the host gate: on deniedDomains, or not on allowedDomains
	CauseBadRequest         // a request the proxy does not forward as it stands (Reason says why; 400)
	CauseBodyless           // the decider asked for the body of a GET, HEAD or OPTIONS that has one (403)
	CausePlaintextHeaderSet // an allow that sets headers on plain HTTP, not enabled (403)
)

// Refusal is one answer the proxy gives itself.
type Refusal struct {
	Cause  Cause
	Kind   ask.Kind // KindHTTP answers keep the connection when they can; KindConnect answers close it
	Status int      // the decider's status, for CauseDenied
	Reason string   // the decider's reason, the refusal phrase, or what is wrong
	Host   string   // the canonical destination host
	// Failure says how the upstream leg failed, for CauseUnreachable
	// (unreachable.go); Reason is then the line the client is told.
	Failure UpstreamFailure
	// Log is the decision record's reason when it says more than Reason
	// (an upstream failure's error, which may name the proxy's own
	// addresses); "": Reason.
	Log string
}

// Answer is a rendered refusal. For KindSOCKS only SOCKS is used.
type Answer struct {
	Status int
	Phrase string
	Header [][2]string // in order; the proxy adds Content-Length (and Connection) for KindHTTP
	Body   string
	SOCKS  byte // the SOCKS5 reply code
}

// Mode renders refusals the way one operating mode of srt-proxy answers
// them. srt's own mode is SRTMode; proxy-only mode (X-Deny-Reason codes) is
// another.
type Mode interface {
	Render(r Refusal) Answer
}

// SOCKS5 reply codes (RFC 1928 §6).
const (
	socksSucceeded       = 0x00
	socksGeneralFailure  = 0x01
	socksNotAllowed      = 0x02
	socksHostUnreachable = 0x04
	socksConnRefused     = 0x05
	socksCmdUnsupported  = 0x07
	socksAddrUnsupported = 0x08
)

// SRTMode renders refusals as the reference's srt does (§4.3, §4.6): policy
// refusals are 403 with X-Proxy-Error, plain-HTTP bodies end in a newline,
// CONNECT answers are written raw (no Content-Length) and close the
// connection, SOCKS gets a reply code.
type SRTMode struct{}

const (
	allowlistBody     = "Connection blocked by network allowlist"
	tagAllowlist      = "blocked-by-allowlist"
	tagSandboxRuntime = "blocked-by-sandbox-runtime"
	textPlain         = "text/plain"
)

// Render implements Mode.
func (SRTMode) Render(r Refusal) Answer {
	if a, ok := renderTLS(r); ok {
		return a
	}
	connect := r.Kind == ask.KindConnect
	// line ends a plain-HTTP body with a newline; a raw CONNECT body has none.
	line := func(s string) string {
		if connect {
			return s
		}
		return s + "\n"
	}
	// phrase is the CONNECT status phrase carrying the reason (§4.3).
	phrase := func(reason string) string {
		if connect {
			return sanitize.StatusPhrase(reason)
		}
		return "Forbidden"
	}
	switch r.Cause {
	case CauseDenied:
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: socksNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagAllowlist}},
			Body:   line(allowlistBody)}
	case CauseAddress:
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: socksNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagSandboxRuntime}},
			Body:   line(dial.BlockedMessage(r.Host, r.Reason))}
	case CauseUnreachable:
		return unreachableAnswer(r, "X-Proxy-Error", r.Failure.Tag())
	case CauseUnavailable:
		return Answer{Status: 503, Phrase: "Service Unavailable", SOCKS: socksGeneralFailure,
			Header: [][2]string{{"Content-Type", textPlain}}, Body: line(deciderReason(r.Reason))}
	case CauseAuth:
		return Answer{Status: 407, Phrase: "Proxy Authentication Required", SOCKS: socksNotAllowed,
			Header: [][2]string{{"Proxy-Authenticate", `Basic realm="srt"`}}}
	case CauseMalformed:
		return Answer{Status: 400, Phrase: "Bad Request", SOCKS: socksNotAllowed}
	case CauseHeadTooLarge:
		return Answer{Status: 431, Phrase: "Request Header Fields Too Large", SOCKS: socksGeneralFailure}
	case CauseUnaskable, CauseBadRequest:
		return Answer{Status: 400, Phrase: "Bad Request", SOCKS: socksNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}}, Body: line(r.Reason)}
	case CauseHostNotAllowed:
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: socksNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagAllowlist}},
			Body:   line(allowlistBody)}
	case CauseBodyless, CausePlaintextHeaderSet:
		return Answer{Status: 403, Phrase: "Forbidden", SOCKS: socksNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagSandboxRuntime}},
			Body:   line(r.Reason)}
	default:
		return Answer{Status: 500, Phrase: "Internal Server Error", SOCKS: socksGeneralFailure}
	}
}

// deciderReason is the text of a decider-unavailable refusal: "request
// decider: <why>", the why sanitised to one line.
func deciderReason(why string) string {
	why = sanitize.Line(why)
	if strings.HasPrefix(why, "request decider") {
		return why
	}
	if why == "" {
		why = "unavailable"
	}
	return "request decider: " + why
}
