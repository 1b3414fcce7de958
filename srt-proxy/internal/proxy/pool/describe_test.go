package pool

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// TestUpstreamFailureText: what a client is told of each way an upstream
// leg fails, and the codes its refusal carries.
func TestUpstreamFailureText(t *testing.T) {
	unreachable := func(err error, parent string) error {
		return &dial.UnreachableError{Host: "up.test", Port: 443, Parent: parent, Err: err}
	}
	tests := []struct {
		name     string
		err      error
		trustFix string
		want     refusal.UpstreamFailure
		text     string
	}{
		{"untrusted, this host's store", unreachable(fmt.Errorf("TLS: %w", x509.UnknownAuthorityError{}), ""), "", refusal.UpstreamCertificateNotTrusted,
			"upstream up.test:443: certificate not trusted (x509: certificate signed by unknown authority); if you trust it, add its CA certificate to the trust store of the host srt-proxy runs on (or SSL_CERT_FILE)"},
		{"untrusted, the settings", unreachable(x509.UnknownAuthorityError{}, ""), "network.tlsTerminate.extraCaCertPaths", refusal.UpstreamCertificateNotTrusted,
			"upstream up.test:443: certificate not trusted (x509: certificate signed by unknown authority); if you trust it, add its CA certificate to network.tlsTerminate.extraCaCertPaths"},
		{"no name", unreachable(&net.DNSError{Err: "no such host", Name: "up.test", Server: "10.0.0.53:53", IsNotFound: true}, ""), "", refusal.UpstreamNameNotResolved,
			"upstream up.test:443: name not resolved"},
		{"through a parent", unreachable(fmt.Errorf("parent proxy p.test:3128: %w", syscall.ECONNREFUSED), "p.test:3128"), "", refusal.UpstreamConnectionRefused,
			"upstream up.test:443, through the parent proxy p.test:3128: connection refused"},
		{"no route", unreachable(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, ""), "", refusal.UpstreamUnreachable,
			"upstream up.test:443: unreachable (no route to host)"},
		{"reset before the answer", &NoAnswerError{os.NewSyscallError("read", syscall.ECONNRESET)}, "", refusal.UpstreamFailed,
			"upstream up.test:443: failed (connection reset by peer)"},
		{"closed before the answer", &NoAnswerError{io.EOF}, "", refusal.UpstreamFailed,
			"upstream up.test:443: failed (it closed the connection without answering)"},
		{"stalled", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), "", refusal.UpstreamTimedOut,
			"upstream up.test:443: timed out"},
		{"not HTTP", errors.New(`malformed HTTP response "SSH-2.0"`), "", refusal.UpstreamFailed,
			"upstream up.test:443: failed (its answer is not a valid HTTP/1.x response)"},
		{"stopping", ErrServerClosing, "", refusal.UpstreamFailed,
			"upstream up.test:443: failed (srt-proxy is stopping)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, text := Describe(tt.err, "up.test", 443, tt.trustFix)
			if f != tt.want || text != tt.text {
				t.Errorf("got %v %q\nwant %v %q", f, text, tt.want, tt.text)
			}
		})
	}
	if f := refusal.UpstreamNameNotResolved; f.Phrase() != "upstream name not resolved" || f.Tag() != "upstream-name-not-resolved" || f.Code() != "upstream_name_not_resolved" {
		t.Errorf("%q %q %q", f.Phrase(), f.Tag(), f.Code())
	}
	if f := refusal.UpstreamFailure(99); f.Phrase() != "upstream unreachable" {
		t.Errorf("an unknown failure reads %q", f.Phrase())
	}
}
