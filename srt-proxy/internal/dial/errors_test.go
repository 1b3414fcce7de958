package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// TestFailure: each way an allowed destination fails, over real loopback
// sockets, is told apart, with what a client may see of it.
func TestFailure(t *testing.T) {
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	tlsPort := tlsServer(t, ca, "up.test")
	// silent accepts and never answers: a TLS handshake with it times out.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	// parent refuses every CONNECT.
	parent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	go func() {
		for {
			c, err := parent.Accept()
			if err != nil {
				return
			}
			c.Read(make([]byte, 4096))
			c.Write([]byte("HTTP/1.1 403 Forbidden\r\n\r\n"))
			c.Close()
		}
	}()

	loop, _ := policy.ParseAllowPattern("127.0.0.1")
	dialer := func(parent *ParentProxy) *Dialer {
		return &Dialer{
			HostAddrs: func() []netip.Addr { return nil },
			Resolve: func(_ context.Context, _, host string) ([]netip.Addr, error) {
				if host == "nowhere.test" {
					return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
				}
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			},
			Policy: func() *policy.AddressPolicy { return &policy.AddressPolicy{Allowed: []policy.Pattern{loop}} },
			Parent: parent,
		}
	}
	d := dialer(nil)
	trusting := &tls.Config{RootCAs: ca.Pool}
	tests := []struct {
		name   string
		dial   func(ctx context.Context) error
		want   Failure
		detail string
		parent string
	}{
		{"name not resolved", func(ctx context.Context) error {
			_, _, err := d.Tunnel(ctx, "nowhere.test", 80)
			return err
		}, NameNotResolved, "", ""},
		{"connection refused", func(ctx context.Context) error {
			_, _, err := d.Tunnel(ctx, "127.0.0.1", closedPort)
			return err
		}, ConnectionRefused, "", ""},
		{"timed out", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, _, err := d.TLS(ctx, "up.test", silent.Addr().(*net.TCPAddr).Port, trusting, nil)
			return err
		}, TimedOut, "", ""},
		{"certificate not trusted", func(ctx context.Context) error {
			_, _, err := d.TLS(ctx, "up.test", tlsPort, &tls.Config{RootCAs: x509.NewCertPool()}, nil)
			return err
		}, CertificateNotTrusted, "x509: certificate signed by unknown authority", ""},
		{"certificate for another name", func(ctx context.Context) error {
			_, _, err := d.TLS(ctx, "other.test", tlsPort, trusting, nil)
			return err
		}, CertificateInvalid, "x509: certificate is valid for up.test, not other.test", ""},
		{"parent refuses", func(ctx context.Context) error {
			u, _ := url.Parse("http://" + parent.Addr().String())
			_, _, err := dialer(&ParentProxy{HTTPS: u}).Tunnel(ctx, "up.test", 443)
			return err
		}, Unreachable, `refused CONNECT: "HTTP/1.1 403 Forbidden"`, parent.Addr().String()},
		{"parent refuses the connection", func(ctx context.Context) error {
			u, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(closedPort))
			_, _, err := dialer(&ParentProxy{HTTP: u}).HTTP(ctx, "http", "up.test", 80, nil)
			return err
		}, ConnectionRefused, "", "127.0.0.1:" + strconv.Itoa(closedPort)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.dial(context.Background())
			var u *UnreachableError
			if !errors.As(err, &u) {
				t.Fatalf("err %v, want an UnreachableError", err)
			}
			if got := u.Failure(); got != tt.want {
				t.Errorf("Failure %d, want %d (%v)", got, tt.want, err)
			}
			if got := u.Detail(); got != tt.detail {
				t.Errorf("Detail %q, want %q", got, tt.detail)
			}
			if u.Parent != tt.parent {
				t.Errorf("Parent %q, want %q", u.Parent, tt.parent)
			}
		})
	}
}

func TestBlockedMessage(t *testing.T) {
	got := BlockedMessage("myapp.test", "resolved to a loopback address")
	if got != "Connection to myapp.test blocked: resolved to a loopback address" {
		t.Errorf("got %q", got)
	}
}
