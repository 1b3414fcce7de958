package proxy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// TestTerminateGoClient: a Go client through a terminated tunnel. The
// decider is asked about the CONNECT, then about each request with the
// TLS server name; the upstream connection is kept between requests;
// responses carry Keep-Alive: timeout=5.
func TestTerminateGoClient(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	c := f.client(f.pool)
	for i := range 3 {
		resp, err := c.Get(fmt.Sprintf("https://%s/p/%d?q=1", f.target("echo.test"), i))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), fmt.Sprintf("GET /p/%d?q=1 host=echo.test:%d", i, f.port)) {
			t.Errorf("request %d: %d %q", i, resp.StatusCode, body)
		}
		if ka := resp.Header.Get("Keep-Alive"); ka != "timeout=5" {
			t.Errorf("Keep-Alive %q", ka)
		}
		if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName != "sandbox-runtime ephemeral CA" {
			t.Errorf("the client did not see a minted certificate")
		}
	}
	asked := f.asker.requests()
	if len(asked) != 4 || asked[0].Kind != ask.KindConnect {
		t.Fatalf("asked %+v", asked)
	}
	r := asked[1]
	if r.Kind != ask.KindHTTP || r.Method != "GET" || r.Host != "echo.test" || r.Port != f.port || r.SNI != "echo.test" ||
		r.Path != "/p/0" || r.Query != "q=1" || r.HostHeader != f.target("echo.test") || r.User != "srt.dGVzdA" {
		t.Errorf("asked %+v", r)
	}
	if n := f.conns.Load(); n != 1 {
		t.Errorf("%d upstream connections for 3 requests on one tunnel", n)
	}
}

// TestTerminatePerRequestDecisions: a decider that allows GET and denies
// POST on the same host. A denial is answered inside the tunnel with the
// verdict's status, X-Proxy-Error: blocked-by-sandbox-runtime and the
// reason; the tunnel carries on.
func TestTerminatePerRequestDecisions(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{answer: func(r *ask.Request) (ask.Verdict, error) {
		switch {
		case r.Method == "POST" && r.Path == "/quiet":
			return ask.Verdict{Status: 451}, nil
		case r.Method == "POST":
			return ask.Verdict{Status: 403, Reason: "no uploads to echo.test"}, nil
		}
		return ask.Verdict{Allow: true}, nil
	}})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp, body := do(t, tc, br, "GET /ok HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "GET /ok") {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, tc, br, "POST /up HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 403 || body != "no uploads to echo.test\n" ||
		resp.Header.Get("X-Proxy-Error") != "blocked-by-sandbox-runtime" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("POST: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = do(t, tc, br, "POST /quiet HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 451 || body != "denied by sandbox policy\n" {
		t.Errorf("POST without a reason: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, tc, br, "GET /again HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "GET /again") {
		t.Errorf("GET after the denials: %d %q", resp.StatusCode, body)
	}
	for _, r := range f.requests() {
		if r.Method == "POST" {
			t.Errorf("a denied POST reached the upstream: %s", r.RequestURI)
		}
	}
}

// TestTerminateHeaderEdits: the verdict's removeHeaders and setHeaders
// (names folded, [] removes), hop-by-hop fields in any spelling, and
// stripResponseHeaders.
func TestTerminateHeaderEdits(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{
		server: func(s *Server) { s.Rules.StripResponseHeaders = []string{"X_Secret", "server.timing"} },
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Secret", "s3")
			w.Header().Set("Server-Timing", "db;dur=53")
			w.Header().Set("X-Kept", "yes")
			echoHandler(w, r)
		}),
		answer: func(*ask.Request) (ask.Verdict, error) {
			return ask.Verdict{Allow: true,
				RemoveHeaders: []string{"x-remove-me"},
				SetHeaders:    map[string][]string{"x-added": {"1", "2"}, "x-replaced": {"new"}, "x-gone": {}}}, nil
		},
	})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp, body := do(t, tc, br, "GET /h HTTP/1.1\r\nHost: echo.test\r\nX_Remove_Me: a\r\nX.Replaced: old\r\nX-Gone: g\r\n"+
		"X-Kept-Request: k\r\nKeep_Alive: 300\r\nConnection: x-hop\r\nX-Hop: h\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	for _, want := range []string{"X-Added: 1\n", "X-Added: 2\n", "X-Replaced: new\n", "X-Kept-Request: k\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the upstream did not see %q:\n%s", want, body)
		}
	}
	for _, gone := range []string{"Remove", "old", "X-Gone", "Keep_alive", "X-Hop", "Connection"} {
		if strings.Contains(body, gone) {
			t.Errorf("the upstream saw %q:\n%s", gone, body)
		}
	}
	if resp.Header.Get("X-Secret") != "" || resp.Header.Get("Server-Timing") != "" || resp.Header.Get("X-Kept") != "yes" {
		t.Errorf("response headers %v", resp.Header)
	}
}

// TestTerminateRefusals: the refusals inside a terminated tunnel, with
// the connection kept after each.
func TestTerminateRefusals(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	for _, tc2 := range []struct {
		name, req   string
		status      int
		tag, body   string
		askedBefore bool
	}{
		{"TRACE", "TRACE / HTTP/1.1\r\nHost: echo.test\r\n\r\n", 405, "blocked-by-sandbox-runtime", "the TRACE method is not forwarded\n", false},
		{"TRACK", "TRACK / HTTP/1.1\r\nHost: echo.test\r\n\r\n", 405, "blocked-by-sandbox-runtime", "the TRACK method is not forwarded\n", false},
		{"ambiguous", "GET /public/../admin HTTP/1.1\r\nHost: echo.test\r\n\r\n", 400, "ambiguous-request-target", refusal.WhyAmbiguous + "\n", false},
		{"ambiguous escape", "GET /a/%2e%2e/b HTTP/1.1\r\nHost: echo.test\r\n\r\n", 400, "ambiguous-request-target", refusal.WhyAmbiguous + "\n", false},
		{"backslash", "GET /a\\..\\b HTTP/1.1\r\nHost: echo.test\r\n\r\n", 400, "ambiguous-request-target", refusal.WhyAmbiguous + "\n", false},
		{"two Host headers", "GET / HTTP/1.1\r\nHost: echo.test\r\nHost: other.test\r\n\r\n", 400, "", refusal.WhyTwoHosts + "\n", false},
		{"authority-form", "GET echo.test:443 HTTP/1.1\r\nHost: echo.test\r\n\r\n", 400, "", "", false},
	} {
		before := len(f.asker.requests())
		resp, body := do(t, tc, br, tc2.req)
		if resp.StatusCode != tc2.status || resp.Header.Get("X-Proxy-Error") != tc2.tag || body != tc2.body {
			t.Errorf("%s: %d %v %q", tc2.name, resp.StatusCode, resp.Header, body)
		}
		if got := len(f.asker.requests()); got != before {
			t.Errorf("%s: the decider was asked", tc2.name)
		}
	}
	if len(f.requests()) != 0 {
		t.Errorf("refused requests reached the upstream")
	}
}

// TestTerminateAmbiguousModes: asSpelled asks about and forwards the
// target as spelled, normalize the normalized one; fragments are cut.
func TestTerminateAmbiguousModes(t *testing.T) {
	for _, tc := range []struct {
		mode     rules.TargetMode
		asked    string
		upstream string
	}{
		{rules.TargetAsSpelled, "/a/./%7Eb/../c", "/a/./%7Eb/../c?x=1"},
		{rules.TargetNormalize, "/a/c", "/a/c?x=1"},
	} {
		f := newTLSFixture(t, fixtureOpts{server: func(s *Server) { s.Rules.AmbiguousTarget = tc.mode }})
		tc2, br := f.tunnel(f.target("echo.test"), "echo.test")
		resp, body := do(t, tc2, br, "GET /a/./%7Eb/../c?x=1#frag HTTP/1.1\r\nHost: echo.test\r\n\r\n")
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "GET "+tc.upstream+" ") {
			t.Errorf("mode %d: %d %q", tc.mode, resp.StatusCode, body)
		}
		if asked := f.asker.requests(); asked[len(asked)-1].Path != tc.asked || asked[len(asked)-1].Query != "x=1" {
			t.Errorf("mode %d: asked %+v", tc.mode, asked[len(asked)-1])
		}
	}
}

// TestTerminateRequireHostMatch: 421 with the reference's bodies, and
// the certificate minted for the CONNECT target whatever the SNI.
func TestTerminateRequireHostMatch(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{server: func(s *Server) { s.Rules.RequireHostMatch = true }})
	target := f.target("echo.test")
	tc, br := f.tunnel(target, "echo.test")
	for _, c := range []struct{ name, req, body string }{
		{"Host names another host", "GET / HTTP/1.1\r\nHost: other.test:" + fmt.Sprint(f.port) + "\r\n\r\n", refusal.WhyHostMismatch},
		{"Host names another port", "GET / HTTP/1.1\r\nHost: echo.test:1\r\n\r\n", refusal.WhyHostMismatch},
		{"Host without its port", "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n", refusal.WhyHostMismatch},
		{"no Host", "GET / HTTP/1.1\r\n\r\n", refusal.WhyHostMismatch},
		{"two Host headers", "GET / HTTP/1.1\r\nHost: " + target + "\r\nHost: " + target + "\r\n\r\n", refusal.WhyTwoHosts},
		{"absolute-form authority", "GET https://other.test:" + fmt.Sprint(f.port) + "/ HTTP/1.1\r\nHost: " + target + "\r\n\r\n", refusal.WhyAuthMismatch},
	} {
		resp, body := do(t, tc, br, c.req)
		if resp.StatusCode != 421 || body != c.body+"\n" {
			t.Errorf("%s: %d %q", c.name, resp.StatusCode, body)
		}
	}
	resp, body := do(t, tc, br, "GET https://"+target+"/abs HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "GET https://"+target+"/abs ") {
		t.Errorf("matching request: %d %q", resp.StatusCode, body)
	}

	// The SNI names another host: the certificate is still the target's,
	// and every request is misdirected.
	c := f.connect(target)
	var seen *x509.Certificate
	tc2 := tls.Client(c, &tls.Config{ServerName: "other.test", RootCAs: f.pool, InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error { seen = cs.PeerCertificates[0]; return nil }})
	if err := tc2.Handshake(); err != nil {
		t.Fatal(err)
	}
	if seen.Subject.CommonName != "echo.test" || len(seen.DNSNames) != 1 || seen.DNSNames[0] != "echo.test" {
		t.Errorf("certificate for %q %v, want echo.test", seen.Subject.CommonName, seen.DNSNames)
	}
	resp, body = do(t, tc2, bufioReader(tc2), "GET / HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp.StatusCode != 421 || body != refusal.WhySNIMismatch+"\n" {
		t.Errorf("SNI mismatch: %d %q", resp.StatusCode, body)
	}
}

// TestTerminateExcludedPinnedClient: a client that pins the upstream's
// certificate (it trusts only the upstream's CA) works through an
// excluded host, an opaque tunnel; through a terminated one it sees the
// minted certificate and refuses it.
func TestTerminateExcludedPinnedClient(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	pinned := f.client(f.upCA.Pool)
	resp, err := pinned.Get("https://" + f.target("excluded.test") + "/pinned")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS.PeerCertificates[0].Issuer.CommonName != "srt-proxy test CA" {
		t.Errorf("excluded: %d, issuer %q", resp.StatusCode, resp.TLS.PeerCertificates[0].Issuer.CommonName)
	}
	_, err = pinned.Get("https://" + f.target("echo.test") + "/pinned")
	var uerr x509.UnknownAuthorityError
	if !errors.As(err, &uerr) {
		t.Errorf("terminated host with a pinning client: %v", err)
	}
	for _, r := range f.asker.requests() {
		if r.Kind == ask.KindHTTP && r.Host == "excluded.test" {
			t.Errorf("a request in an excluded tunnel was asked about: %+v", r)
		}
	}
}

// TestTerminateTooManyTunnels: with maxTunnels 1 a second concurrent
// tunnel gets 503 too-many-tunnels; once the first closes, a new one
// works. Excluded hosts do not count.
func TestTerminateTooManyTunnels(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{terminate: func(tt *terminate.Terminate) { tt.MaxTunnels = 1 }})
	target := f.target("echo.test")
	first, br := f.tunnel(target, "echo.test")
	do(t, first, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	got := rawExchange(t, f.proxy, []byte("CONNECT "+target+" HTTP/1.1\r\nProxy-Authorization: "+basicAuth("srt.dGVzdA", testToken)+"\r\n\r\n"))
	want := "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: too-many-tunnels\r\n\r\ntoo many TLS-terminated tunnels at once"
	if got != want {
		t.Errorf("second tunnel:\n%q\nwant\n%q", got, want)
	}
	if r := f.asker.refusals(); len(r) != 1 || r[0] != "echo.test too many TLS-terminated tunnels at once" {
		t.Errorf("refusals told to the decider: %q", r)
	}
	f.connect(f.target("excluded.test")) // opaque: no slot needed
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.TLS.InUse() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	again, br := f.tunnel(target, "echo.test")
	if resp, _ := do(t, again, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("after the first closed: %d", resp.StatusCode)
	}
}

// TestTerminateHandshakeTimeout: a client that sends part of a
// ClientHello and stalls is closed at the handshake deadline.
func TestTerminateHandshakeTimeout(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{terminate: func(tt *terminate.Terminate) { tt.HandshakeTimeout = 200 * time.Millisecond }})
	for _, first := range [][]byte{nil, {0x16, 3}, {0x16, 3, 1, 0, 200, 1, 3, 3}} {
		c := f.connect(f.target("echo.test"))
		c.Write(first)
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(make([]byte, 1))
		took := time.Since(start)
		var ne net.Error
		if n != 0 || err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("% x: read %d, %v", first, n, err)
		}
		if took < 150*time.Millisecond || took > 2*time.Second {
			t.Errorf("% x: closed after %v, want about 200ms", first, took)
		}
	}
}

// TestTerminateOpaque: bytes that are not TLS go through an opaque tunnel,
// or with refuseOpaqueTunnels the connection is destroyed (and an
// excluded host's CONNECT refused with 403).
func TestTerminateOpaque(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	echoPort := portOf(t, echo.Addr().String())
	f := newTLSFixture(t, fixtureOpts{})
	c := f.connect("echo.test:" + echoPort)
	c.Write([]byte("hello, not TLS"))
	if got := readN(t, c, 14); string(got) != "hello, not TLS" {
		t.Errorf("opaque tunnel echoed %q", got)
	}

	f = newTLSFixture(t, fixtureOpts{server: func(s *Server) { s.Rules.RefuseOpaqueTunnels = true }})
	c = f.connect("echo.test:" + echoPort)
	c.Write([]byte("hello, not TLS"))
	if got, err := io.ReadAll(c); len(got) != 0 || err != nil && !isReset(err) {
		t.Errorf("refused opaque tunnel: %q, %v", got, err)
	}
	if r := f.asker.refusals(); len(r) != 1 || !strings.Contains(r[0], "not a TLS ClientHello") {
		t.Errorf("refusals %q", r)
	}
	got := rawExchange(t, f.proxy, []byte("CONNECT "+f.target("excluded.test")+" HTTP/1.1\r\nProxy-Authorization: "+basicAuth("srt", testToken)+"\r\n\r\n"))
	if !strings.HasPrefix(got, "HTTP/1.1 403 ") || !strings.HasSuffix(got, "\r\n\r\nthis proxy does not tunnel CONNECTs it cannot inspect") {
		t.Errorf("excluded host under refuseOpaqueTunnels: %q", got)
	}
}

func isReset(err error) bool { return strings.Contains(err.Error(), "reset") }

// TestTerminateUpstreamUntrusted: an upstream whose certificate the
// proxy's roots do not trust gets 502 inside the tunnel, saying so and
// where to add its CA, in the body and the X-Proxy-Error header; the
// decider is told, and Warn once for the destination, however many
// requests meet it (issue 14: a bare 502; the cause only under -d).
func TestTerminateUpstreamUntrusted(t *testing.T) {
	var mu sync.Mutex
	var warned []string
	f := newTLSFixture(t, fixtureOpts{
		terminate: func(tt *terminate.Terminate) {
			tt.Roots, tt.TrustFix = x509.NewCertPool(), "network.tlsTerminate.extraCaCertPaths"
		},
		server: func(s *Server) {
			s.Warn = func(text string) { mu.Lock(); warned = append(warned, text); mu.Unlock() }
		},
	})
	want := "upstream " + f.target("echo.test") + ": certificate not trusted (x509: certificate signed by unknown authority); " +
		"if you trust it, add its CA certificate to network.tlsTerminate.extraCaCertPaths"
	for i := range 3 {
		tc, br := f.tunnel(f.target("echo.test"), "echo.test")
		resp, body := do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
		if resp.StatusCode != 502 || resp.Header.Get("X-Proxy-Error") != "upstream-certificate-not-trusted" || body != want+"\n" {
			t.Errorf("request %d: %d, X-Proxy-Error %q, body %q", i, resp.StatusCode, resp.Header.Get("X-Proxy-Error"), body)
		}
		tc.Close()
	}
	if r := f.asker.refusals(); len(r) != 3 || !strings.Contains(r[0], "certificate") {
		t.Errorf("refusals %q", r)
	}
	if len(f.requests()) != 0 {
		t.Error("the request reached an untrusted upstream")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || warned[0] != want {
		t.Errorf("warned %q, want once %q", warned, want)
	}
}

// TestTerminateIdleLimits: a tunnel with no request is closed after
// FirstRequestTimeout, one idle after a response after IdleTimeout.
func TestTerminateIdleLimits(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{terminate: func(tt *terminate.Terminate) {
		tt.FirstRequestTimeout, tt.IdleTimeout = time.Second, 300*time.Millisecond
	}})
	waitClosed := func(tc *tls.Conn) time.Time {
		tc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := tc.Read(make([]byte, 1))
		if err == nil || strings.Contains(err.Error(), "timeout") {
			t.Errorf("read: %v", err)
		}
		return time.Now()
	}
	start := time.Now()
	tc, _ := f.tunnel(f.target("echo.test"), "echo.test")
	if d := waitClosed(tc).Sub(start); d < 900*time.Millisecond || d > 5*time.Second {
		t.Errorf("no request: closed %v after the CONNECT, want about 1s", d)
	}
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	start = time.Now()
	if d := waitClosed(tc).Sub(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Errorf("after a response: closed after %v, want about 300ms", d)
	}
}

// TestTerminateBodies: request bodies (Content-Length and chunked) and a
// large response go through; a decider that asks to see a body
// (need_body through Request.Body) sees its first bytes, and the upstream
// still gets all of it.
func TestTerminateBodies(t *testing.T) {
	var mu sync.Mutex
	var peeked []byte
	f := newTLSFixture(t, fixtureOpts{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(bytes.Repeat([]byte("x"), 3<<20))
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d %s", r.Method, len(b), b[:min(len(b), 16)])
	}), answer: func(r *ask.Request) (ask.Verdict, error) {
		if r.Path == "/inspect" && r.Body != nil {
			data, cut, err := r.Body.Read(8)
			if err != nil || !cut {
				return ask.Verdict{}, fmt.Errorf("body: %v cut=%v", err, cut)
			}
			mu.Lock()
			peeked = data
			mu.Unlock()
		}
		return ask.Verdict{Allow: true}, nil
	}})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	payload := strings.Repeat("0123456789", 1000)
	resp, body := do(t, tc, br, fmt.Sprintf("POST /len HTTP/1.1\r\nHost: echo.test\r\nContent-Length: %d\r\n\r\n%s", len(payload), payload))
	if resp.StatusCode != 200 || body != "POST 10000 0123456789012345" {
		t.Errorf("Content-Length body: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, tc, br, "PUT /chunked HTTP/1.1\r\nHost: echo.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
	if resp.StatusCode != 200 || body != "PUT 11 hello world" {
		t.Errorf("chunked body: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, tc, br, fmt.Sprintf("POST /inspect HTTP/1.1\r\nHost: echo.test\r\nContent-Length: %d\r\n\r\n%s", len(payload), payload))
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != 200 || body != "POST 10000 0123456789012345" || string(peeked) != "01234567" {
		t.Errorf("inspected body: %d %q, decider saw %q", resp.StatusCode, body, peeked)
	}
	resp, body = do(t, tc, br, "GET /big HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 200 || len(body) != 3<<20 {
		t.Errorf("large response: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// TestTerminateUpstreamIdleClose: the upstream closes its kept connection
// between two requests; the second request goes out on a new one.
func TestTerminateUpstreamIdleClose(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{upIdle: 50 * time.Millisecond})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	for i := range 3 {
		resp, body := do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
		time.Sleep(150 * time.Millisecond)
	}
	if n := f.conns.Load(); n != 3 {
		t.Errorf("%d upstream connections, want 3", n)
	}
}

// TestTerminateShutdown: an idle terminated tunnel is closed at once when
// the server shuts down.
func TestTerminateShutdown(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	start := time.Now()
	f.srv.Shutdown()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("shutdown took %v with an idle terminated tunnel", d)
	}
	tc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := tc.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("the tunnel is still open: %v", err)
	}
}

// rawTLSUpstream serves each connection on a loopback port with a TLS
// certificate of the fixture's upstream CA: it reads a request head and
// writes answer.
func rawTLSUpstream(t *testing.T, f *tlsFixture, answer func(c net.Conn)) int {
	t.Helper()
	cfg, err := f.upCA.Server("echo.test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, l, func(c net.Conn) {
		br := bufioReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		answer(c)
	})
	return l.Addr().(*net.TCPAddr).Port
}

// TestTerminateHostileUpstream: a response head past 1 MiB and a body cut
// short are failures of that request, not of the proxy.
func TestTerminateHostileUpstream(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	huge := rawTLSUpstream(t, f, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		c.Write(bytes.Repeat([]byte("a"), 2<<20))
	})
	tc, br := f.tunnel(fmt.Sprintf("echo.test:%d", huge), "echo.test")
	resp, _ := do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp.StatusCode != 502 {
		t.Errorf("huge response head: %d", resp.StatusCode)
	}

	short := rawTLSUpstream(t, f, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
	})
	tc, br = f.tunnel(fmt.Sprintf("echo.test:%d", short), "echo.test")
	tc.Write([]byte("GET / HTTP/1.1\r\nHost: echo.test\r\n\r\n"))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if string(body) != "only this" || err == nil {
		t.Errorf("cut body: %q, %v", body, err)
	}
}

// TestTerminateClientLeavesMidBody: a client that goes away in the middle
// of a large response does not leave the proxy reading the rest.
func TestTerminateClientLeavesMidBody(t *testing.T) {
	served := make(chan error, 1)
	f := newTLSFixture(t, fixtureOpts{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/huge" {
			w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		} // else chunked
		chunk := make([]byte, 64<<10)
		for n := 0; n < 1<<30; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				served <- err
				return
			}
		}
		served <- nil
	})})
	for _, path := range []string{"/huge", "/huge-chunked"} {
		tc, br := f.tunnel(f.target("echo.test"), "echo.test")
		tc.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: echo.test\r\n\r\n"))
		if _, err := http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		}
		readN(t, br, 1<<20)
		tc.Close()
		select {
		case err := <-served:
			if err == nil {
				t.Errorf("%s: the upstream sent the whole GiB: the proxy read on after the client left", path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the upstream is still sending 10s after the client left", path)
		}
	}
}
