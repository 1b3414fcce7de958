package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// tlsServer accepts TLS connections on loopback with a certificate the CA
// signed for names, and completes each handshake.
func tlsServer(t *testing.T, ca *testcert.CA, names ...string) int {
	t.Helper()
	cfg, err := ca.Server(names...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func TestTLS(t *testing.T) {
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	port := tlsServer(t, ca, "up.test")
	loop, _ := policy.ParseAllowPattern("127.0.0.1")
	d := &Dialer{
		HostAddrs: func() []netip.Addr { return nil },
		Resolve: func(context.Context, string, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
		Policy: func() *policy.AddressPolicy { return &policy.AddressPolicy{Allowed: []policy.Pattern{loop}} },
	}
	wrapped := false
	wrap := func(c net.Conn) net.Conn { wrapped = true; return c }
	tc, dialed, err := d.TLS(context.Background(), "up.test", port, &tls.Config{RootCAs: ca.Pool}, wrap)
	if err != nil {
		t.Fatal(err)
	}
	tc.Close()
	if !wrapped || dialed.Addr == "" || tc.ConnectionState().ServerName != "up.test" {
		t.Errorf("wrapped %v, dialed %+v, server name %q", wrapped, dialed, tc.ConnectionState().ServerName)
	}

	var u *UnreachableError
	_, _, err = d.TLS(context.Background(), "up.test", port, &tls.Config{RootCAs: x509.NewCertPool()}, nil)
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted: %v", err)
	}
	_, _, err = d.TLS(context.Background(), "other.test", port, &tls.Config{RootCAs: ca.Pool}, nil)
	if !errors.As(err, &u) {
		t.Errorf("a certificate for another name: %v", err)
	}
	d.Policy = nil // loopback is refused again
	var refused *AddressRefusedError
	if _, _, err = d.TLS(context.Background(), "up.test", port, &tls.Config{RootCAs: ca.Pool}, nil); !errors.As(err, &refused) {
		t.Errorf("resolved-address check: %v", err)
	}
}

func TestUpstreamRoots(t *testing.T) {
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	withKey := filepath.Join(dir, "ca-and-junk.pem")
	os.WriteFile(withKey, append([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), ca.PEM...), 0o600)
	noCert := filepath.Join(dir, "none.pem")
	os.WriteFile(noCert, []byte("not PEM"), 0o600)
	pool, skipped := UpstreamRoots([]string{withKey, noCert, filepath.Join(dir, "missing.pem")})
	if len(skipped) != 2 {
		t.Errorf("skipped %v", skipped)
	}
	port := tlsServer(t, ca, "127.0.0.1")
	c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("the extra CA is not in the pool: %v", err)
	}
	c.Close()
}
