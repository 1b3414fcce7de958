package refusal

import (
	"strings"

	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
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
	if a, ok := renderInject(r, "X-Proxy-Error", tagSandboxRuntime); ok {
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
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagAllowlist}},
			Body:   line(allowlistBody)}
	case CauseAddress:
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagSandboxRuntime}},
			Body:   line(dial.BlockedMessage(r.Host, r.Reason))}
	case CauseUnreachable:
		return unreachableAnswer(r, "X-Proxy-Error", r.Failure.Tag())
	case CauseUnavailable:
		return Answer{Status: 503, Phrase: "Service Unavailable", SOCKS: SOCKSGeneralFailure,
			Header: [][2]string{{"Content-Type", textPlain}}, Body: line(DeciderReason(r.Reason))}
	case CauseAuth:
		return Answer{Status: 407, Phrase: "Proxy Authentication Required", SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Proxy-Authenticate", `Basic realm="srt"`}}}
	case CauseMalformed:
		return Answer{Status: 400, Phrase: "Bad Request", SOCKS: SOCKSNotAllowed}
	case CauseHeadTooLarge:
		return Answer{Status: 431, Phrase: "Request Header Fields Too Large", SOCKS: SOCKSGeneralFailure}
	case CauseUnaskable, CauseBadRequest:
		return Answer{Status: 400, Phrase: "Bad Request", SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}}, Body: line(r.Reason)}
	case CauseHostNotAllowed:
		return Answer{Status: 403, Phrase: phrase(r.Reason), SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagAllowlist}},
			Body:   line(allowlistBody)}
	case CauseBodyless, CausePlaintextHeaderSet:
		return Answer{Status: 403, Phrase: "Forbidden", SOCKS: SOCKSNotAllowed,
			Header: [][2]string{{"Content-Type", textPlain}, {"X-Proxy-Error", tagSandboxRuntime}},
			Body:   line(r.Reason)}
	default:
		return Answer{Status: 500, Phrase: "Internal Server Error", SOCKS: SOCKSGeneralFailure}
	}
}

// DeciderReason is the text of a decider-unavailable refusal: "request
// decider: <why>", the why sanitised to one line.
func DeciderReason(why string) string {
	why = sanitize.Line(why)
	if strings.HasPrefix(why, "request decider") {
		return why
	}
	if why == "" {
		why = "unavailable"
	}
	return "request decider: " + why
}
