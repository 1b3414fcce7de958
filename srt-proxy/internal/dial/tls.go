package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"

	"github.com/srt-sandbox/srt-proxy/internal/trust"
)

// TLS opens the upstream leg of a TLS-terminated tunnel: a byte stream to
// host:port as Tunnel opens it (through the parent proxy when one applies,
// else directly with the resolved-address check), then a TLS client
// handshake on it that verifies the upstream's certificate for host (a
// name, or an IP literal against the certificate's IP addresses). cfg is
// cloned; its ServerName is set to host, so only RootCAs, NextProtos,
// versions and a session cache matter. wrap, when not nil, wraps the
// byte stream under the TLS layer (buffering, accounting). The handshake
// is bounded by ctx.
//
// Errors are Tunnel's; a failed handshake (an untrusted or mismatched
// certificate included) is an *UnreachableError.
func (d *Dialer) TLS(ctx context.Context, host string, port int, cfg *tls.Config, wrap func(net.Conn) net.Conn) (*tls.Conn, Dialed, error) {
	raw, dialed, err := d.Tunnel(ctx, host, port)
	if err != nil {
		return nil, dialed, err
	}
	if wrap != nil {
		raw = wrap(raw)
	}
	c := cfg.Clone()
	c.ServerName = host
	tc := tls.Client(raw, c)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, dialed, &UnreachableError{Host: host, Port: port, Err: fmt.Errorf("TLS: %w", err)}
	}
	return tc, dialed, nil
}

// UpstreamRoots is the pool a TLS-terminated tunnel's upstream certificate
// is verified against: this host's roots plus the CERTIFICATE blocks of
// each file in extra (the settings' tlsTerminate.extraCaCertPaths). Other
// PEM blocks are ignored. A file that cannot be read or holds no
// certificate is skipped, and why is in skipped, one error per file, for a
// debug line (the reference skips such files too).
func UpstreamRoots(extra []string) (pool *x509.CertPool, skipped []error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, p := range extra {
		if err := addCertFile(pool, p); err != nil {
			skipped = append(skipped, err)
		}
	}
	return pool, skipped
}

// addCertFile adds the certificates of one PEM file.
func addCertFile(pool *x509.CertPool, path string) error {
	blocks, err := trust.CertBlocks(path)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pool.AddCert(c)
	}
	return nil
}
