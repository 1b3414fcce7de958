package proxy

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
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

// fromDial maps the dialer's kinds to the proxy's.
var fromDial = map[dial.Failure]UpstreamFailure{
	dial.Unreachable:           UpstreamUnreachable,
	dial.NameNotResolved:       UpstreamNameNotResolved,
	dial.ConnectionRefused:     UpstreamConnectionRefused,
	dial.TimedOut:              UpstreamTimedOut,
	dial.CertificateNotTrusted: UpstreamCertificateNotTrusted,
	dial.CertificateInvalid:    UpstreamCertificateInvalid,
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
		return socksConnRefused
	}
	return socksHostUnreachable
}

// hostTrustFix is where a CA that an upstream's certificate needs is
// added when the proxy verifies upstreams against this host's roots.
const hostTrustFix = "the trust store of the host srt-proxy runs on (or SSL_CERT_FILE)"

// upstreamFailure says how err failed the upstream leg to host:port, and
// the line the client is told: "upstream h:443: certificate not trusted
// (x509: certificate signed by unknown authority); if you trust it, add
// its CA certificate to <trustFix>". It names none of the proxy's own
// addresses (a resolver's, a local port). trustFix "" is hostTrustFix.
func upstreamFailure(err error, host string, port int, trustFix string) (UpstreamFailure, string) {
	where := net.JoinHostPort(host, strconv.Itoa(port))
	f, detail := UpstreamFailed, ""
	var u *dial.UnreachableError
	var errno syscall.Errno
	var na *noAnswerError
	switch {
	case errors.As(err, &u):
		f, detail = fromDial[u.Failure()], u.Detail()
		if u.Parent != "" {
			where += ", through the parent proxy " + u.Parent
		}
	case errors.Is(err, errServerClosing):
		detail = "srt-proxy is stopping"
	case errors.Is(err, os.ErrDeadlineExceeded):
		f = UpstreamTimedOut
	case errors.As(err, &errno):
		detail = errno.Error()
	case errors.As(err, &na):
		detail = "it closed the connection without answering"
	case errors.Is(err, errResponseHeadTooLarge):
		detail = errResponseHeadTooLarge.Error()
	default:
		detail = "its answer is not a valid HTTP/1.x response"
	}
	text := "upstream " + where + ": " + strings.TrimPrefix(f.Phrase(), "upstream ")
	if detail != "" {
		text += " (" + detail + ")"
	}
	if f == UpstreamCertificateNotTrusted {
		if trustFix == "" {
			trustFix = hostTrustFix
		}
		text += "; if you trust it, add its CA certificate to " + trustFix
	}
	return f, text
}

// warnOnce tells Server.Warn about an upstream failure a user must fix
// (a certificate nothing trusts), once per destination for the server's
// life: the response says it to every request, stderr once.
func (s *Server) warnOnce(f UpstreamFailure, host string, port int, text string) {
	if s.Warn == nil || f != UpstreamCertificateNotTrusted {
		return
	}
	if _, told := s.warned.LoadOrStore(net.JoinHostPort(host, strconv.Itoa(port)), true); !told {
		s.Warn(text)
	}
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
