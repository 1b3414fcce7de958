package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// tlsFixture is a TLS-terminating proxy on loopback and an HTTPS upstream
// whose certificate a throwaway test CA signed (the proxy trusts that CA
// as extraCaCertPaths would make it). The names echo.test, other.test and
// excluded.test all resolve to the upstream's address.
type tlsFixture struct {
	t        *testing.T
	upCA     *testcert.CA
	ca       *mitm.CA
	caFile   string // the MITM CA, PEM (curl --cacert, SSL_CERT_FILE)
	upCAFile string // the upstream's CA, PEM
	pool     *x509.CertPool
	asker    *fakeAsker
	srv      *Server
	proxy    string // the proxy's address
	up       *httptest.Server
	port     int          // the upstream's port
	conns    atomic.Int64 // upstream connections accepted

	mu   sync.Mutex
	seen []*http.Request // requests the upstream received
}

type fixtureOpts struct {
	terminate func(*terminate.Terminate)
	server    func(*Server)
	handler   http.Handler // the upstream's; nil: echoHandler
	noToken   bool
	upIdle    time.Duration                           // the upstream server's IdleTimeout
	answer    func(*ask.Request) (ask.Verdict, error) // the decider's; nil allows all
}

func newTLSFixture(t *testing.T, o fixtureOpts) *tlsFixture {
	t.Helper()
	f := &tlsFixture{t: t, asker: &fakeAsker{answer: o.answer}}
	var err error
	if f.upCA, err = testcert.New(); err != nil {
		t.Fatal(err)
	}
	if f.ca, err = mitm.NewEphemeralCA(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f.caFile, f.upCAFile = filepath.Join(dir, "mitm-ca.pem"), filepath.Join(dir, "upstream-ca.pem")
	os.WriteFile(f.caFile, f.ca.CertPEM(), 0o600)
	os.WriteFile(f.upCAFile, f.upCA.PEM, 0o600)
	f.pool = x509.NewCertPool()
	f.pool.AddCert(f.ca.Certificate())

	handler := o.handler
	if handler == nil {
		handler = http.HandlerFunc(echoHandler)
	}
	f.up = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r)
		f.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	f.up.Config.IdleTimeout = o.upIdle
	f.up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	if f.up.TLS, err = f.upCA.Server("echo.test", "other.test", "excluded.test", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	f.up.StartTLS()
	t.Cleanup(f.up.Close)
	f.port = f.up.Listener.Addr().(*net.TCPAddr).Port

	term := &terminate.Terminate{CA: f.ca, Roots: f.upCA.Pool, Exclude: func(h string) bool { return h == "excluded.test" }}
	if o.terminate != nil {
		o.terminate(term)
	}
	f.proxy, f.srv = startProxy(t, f.asker, func(s *Server) {
		if !o.noToken {
			s.Token = testToken
		}
		s.TLS = term
		s.Dialer.Resolve = fakeResolve(map[string][]string{
			"echo.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}, "excluded.test": {"127.0.0.1"}})
		s.Dialer.Policy = exempt(t, "127.0.0.1")
		if o.server != nil {
			o.server(s)
		}
	})
	return f
}

// echoHandler answers "METHOD request-uri" and the request's headers, one
// "name: value" line each, sorted.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	var lines []string
	for k, vs := range r.Header {
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	sort.Strings(lines)
	fmt.Fprintf(w, "%s %s host=%s\n%s\n", r.Method, r.RequestURI, r.Host, strings.Join(lines, "\n"))
}

// target is name:port of the upstream.
func (f *tlsFixture) target(name string) string { return fmt.Sprintf("%s:%d", name, f.port) }

// proxyURL is the proxy's URL with credentials.
func (f *tlsFixture) proxyURL() string {
	return "http://srt.dGVzdA:" + testToken + "@" + f.proxy
}

// client is an HTTP client that goes through the proxy and trusts roots.
func (f *tlsFixture) client(roots *x509.CertPool) *http.Client {
	u, _ := url.Parse(f.proxyURL())
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(u),
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
}

// connect opens a CONNECT tunnel to target and returns the connection
// after the 200 (or fails the test).
func (f *tlsFixture) connect(target string) net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", f.proxy)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", target, target, basicAuth("srt.dGVzdA", testToken))
	if got := readN(f.t, c, len(http1.ConnectEstablished)); string(got) != http1.ConnectEstablished {
		f.t.Fatalf("CONNECT %s: %q", target, got)
	}
	return c
}

// tunnel opens a CONNECT tunnel to target and a TLS session in it with
// the given server name, trusting the MITM CA.
func (f *tlsFixture) tunnel(target, sni string) (*tls.Conn, *bufio.Reader) {
	f.t.Helper()
	c := f.connect(target)
	tc := tls.Client(c, &tls.Config{ServerName: sni, RootCAs: f.pool})
	if err := tc.Handshake(); err != nil {
		f.t.Fatalf("TLS in the tunnel to %s: %v", target, err)
	}
	return tc, bufio.NewReader(tc)
}

// do sends a raw request in a tunnel and reads the response (body
// included).
func do(t *testing.T, tc *tls.Conn, br *bufio.Reader, raw string) (*http.Response, string) {
	t.Helper()
	if _, err := tc.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, sb.String()
}

// requests returns the requests the upstream received.
func (f *tlsFixture) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
