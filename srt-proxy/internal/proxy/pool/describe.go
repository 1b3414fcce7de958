package pool

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// fromDial maps the dialer's kinds to the proxy's.
var fromDial = map[dial.Failure]refusal.UpstreamFailure{
	dial.Unreachable:           refusal.UpstreamUnreachable,
	dial.NameNotResolved:       refusal.UpstreamNameNotResolved,
	dial.ConnectionRefused:     refusal.UpstreamConnectionRefused,
	dial.TimedOut:              refusal.UpstreamTimedOut,
	dial.CertificateNotTrusted: refusal.UpstreamCertificateNotTrusted,
	dial.CertificateInvalid:    refusal.UpstreamCertificateInvalid,
}

// hostTrustFix is where a CA that an upstream's certificate needs is
// added when the proxy verifies upstreams against this host's roots.
const hostTrustFix = "the trust store of the host srt-proxy runs on (or SSL_CERT_FILE)"

// Describe says how err failed the upstream leg to host:port, and
// the line the client is told: "upstream h:443: certificate not trusted
// (x509: certificate signed by unknown authority); if you trust it, add
// its CA certificate to <trustFix>". It names none of the proxy's own
// addresses (a resolver's, a local port). trustFix "" is hostTrustFix.
func Describe(err error, host string, port int, trustFix string) (refusal.UpstreamFailure, string) {
	where := net.JoinHostPort(host, strconv.Itoa(port))
	f, detail := refusal.UpstreamFailed, ""
	var u *dial.UnreachableError
	var errno syscall.Errno
	var na *NoAnswerError
	switch {
	case errors.As(err, &u):
		f, detail = fromDial[u.Failure()], u.Detail()
		switch {
		case u.Parent != "":
			where += ", through the parent proxy " + u.Parent
		case u.MITM != "":
			where += ", through the MITM proxy at " + u.MITM
		}
	case errors.Is(err, ErrServerClosing):
		detail = "srt-proxy is stopping"
	case errors.Is(err, os.ErrDeadlineExceeded):
		f = refusal.UpstreamTimedOut
	case errors.As(err, &errno):
		detail = errno.Error()
	case errors.As(err, &na):
		detail = "it closed the connection without answering"
	case errors.Is(err, ErrResponseHeadTooLarge):
		detail = ErrResponseHeadTooLarge.Error()
	default:
		detail = "its answer is not a valid HTTP/1.x response"
	}
	text := "upstream " + where + ": " + strings.TrimPrefix(f.Phrase(), "upstream ")
	if detail != "" {
		text += " (" + detail + ")"
	}
	if f == refusal.UpstreamCertificateNotTrusted {
		if trustFix == "" {
			trustFix = hostTrustFix
		}
		text += "; if you trust it, add its CA certificate to " + trustFix
	}
	return f, text
}

// UnreachableReason is the refusal reason of a failed upstream leg,
// "upstream unreachable: …".
func UnreachableReason(err error) string {
	var u *dial.UnreachableError
	if errors.As(err, &u) {
		return u.Error()
	}
	return "upstream unreachable: " + err.Error()
}
