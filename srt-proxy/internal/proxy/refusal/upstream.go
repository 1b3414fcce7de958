package refusal

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"

	"strings"
)

// UpstreamFailure says how an allowed upstream leg failed (a refusal of
// CauseUnreachable): the dialer's kinds (dial.Failure), and a leg that was
// opened but failed before a response head could be relayed. A client is
// told it in the refusal header (X-Proxy-Error, X-Deny-Reason) and, for a
// CONNECT, in the status phrase, as a policy refusal is.
type UpstreamFailure int

const (
	UpstreamUnreachable UpstreamFailure = iota // no route, a reset, a parent proxy's refusal, …
	UpstreamNameNotResolved
	UpstreamConnectionRefused
	UpstreamTimedOut
	UpstreamCertificateNotTrusted
	UpstreamCertificateInvalid
	UpstreamFailed // reached, but it closed or failed before a usable response head
)

// upstreamPhrases are the status phrases of the failures; the header
// values are the same words joined by '-' (srt's mode) or '_' (proxy-only
// mode's codes, and the metrics' reasons).
var upstreamPhrases = [...]string{
	UpstreamUnreachable:           "upstream unreachable",
	UpstreamNameNotResolved:       "upstream name not resolved",
	UpstreamConnectionRefused:     "upstream connection refused",
	UpstreamTimedOut:              "upstream timed out",
	UpstreamCertificateNotTrusted: "upstream certificate not trusted",
	UpstreamCertificateInvalid:    "upstream certificate not valid",
	UpstreamFailed:                "upstream failed",
}

// Phrase is the failure's CONNECT status phrase, "upstream name not
// resolved".
func (f UpstreamFailure) Phrase() string {
	if f >= 0 && int(f) < len(upstreamPhrases) {
		return upstreamPhrases[f]
	}
	return upstreamPhrases[UpstreamUnreachable]
}

// Tag is the failure's X-Proxy-Error value, "upstream-name-not-resolved".
func (f UpstreamFailure) Tag() string { return strings.ReplaceAll(f.Phrase(), " ", "-") }

// Code is the failure's X-Deny-Reason value, "upstream_name_not_resolved".
func (f UpstreamFailure) Code() string { return strings.ReplaceAll(f.Phrase(), " ", "_") }

// socks is the SOCKS5 reply to the failure (RFC 1928 §6).
func (f UpstreamFailure) socks() byte {
	if f == UpstreamConnectionRefused {
		return SOCKSConnRefused
	}
	return SOCKSHostUnreachable
}

// unreachableAnswer renders an upstream failure: 502 with the failure in
// header (X-Proxy-Error or X-Deny-Reason, value), the status phrase of a
// CONNECT answer and the text/plain body. A failure nothing is known of
// gets the reference's bare 502.
func unreachableAnswer(r Refusal, header, value string) Answer {
	a := Answer{Status: 502, Phrase: "Bad Gateway", SOCKS: r.Failure.socks()}
	connect := r.Kind == ask.KindConnect
	switch {
	case r.Reason == "" && connect:
	case r.Reason == "":
		a.Header, a.Body = [][2]string{{"Content-Type", textPlain}}, "Bad Gateway"
	case connect:
		a.Phrase = r.Failure.Phrase()
		a.Header, a.Body = [][2]string{{"Content-Type", textPlain}, {header, value}}, r.Reason
	default:
		a.Header, a.Body = [][2]string{{"Content-Type", textPlain}, {header, value}}, r.Reason+"\n"
	}
	return a
}
