package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// termFuzz is the fixture of FuzzTerminatedConn: one TLS-terminating
// Server, its decider and an in-memory TLS upstream, shared by every
// execution. Executions run one at a time; reset clears what one
// execution recorded.
type termFuzz struct {
	srv    *Server
	client *tls.Config    // trusts the MITM CA; server name a.test
	upCfg  *tls.Config    // the upstream's certificate, signed by a test CA the proxy trusts
	ups    sync.WaitGroup // upstream connections still being served

	mu       sync.Mutex
	allowed  map[string][][]byte // "METHOD path?query" allowed → the body bytes the decider read for each
	seen     int                 // requests the upstream received
	problems []string
}

// termFuzzTimeout bounds each phase of an execution. The server's
// timeouts are the defaults, all longer (6 s idle, 10 s first byte, TLS
// handshake and first request, 30 s head), so a connection that waits for
// one of them fails the execution rather than ending quietly.
const termFuzzTimeout = 5 * time.Second

func newTermFuzz(tb testing.TB) *termFuzz {
	tb.Helper()
	upCA, err := testcert.New()
	if err != nil {
		tb.Fatal(err)
	}
	ca, err := mitm.NewEphemeralCA()
	if err != nil {
		tb.Fatal(err)
	}
	z := &termFuzz{}
	if z.upCfg, err = upCA.Server("a.test"); err != nil {
		tb.Fatal(err)
	}
	// TLS 1.2 with session tickets: after the first, each upstream
	// handshake is an abbreviated one, without a key exchange.
	z.upCfg.NextProtos, z.upCfg.MaxVersion = []string{"http/1.1"}, tls.VersionTLS12
	z.client = verifyOnce(ca.Certificate(), "a.test")
	z.srv = &Server{
		Asker: z,
		Token: testToken,
		TLS:   &terminate.Terminate{CA: ca, Roots: upCA.Pool},
		Rules: rules.Rules{RequireHostMatch: true, StripResponseHeaders: []string{"x-strip"}},
		Dialer: &dial.Dialer{
			HostAddrs: func() []netip.Addr { return nil },
			Resolve: func(context.Context, string, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
			},
			Dial: z.dial,
		},
		MaxHeadBytes: 4 << 10,
	}
	z.srv.init()
	return z
}

// verifyOnce is the client's TLS configuration for name: it trusts root
// alone, but verifies a certificate chain it has seen verified before
// only by comparing it (the handshake still checks the proof of the
// leaf's key).
func verifyOnce(root *x509.Certificate, name string) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(root)
	var mu sync.Mutex
	var verified [][]byte // the DER of chains that verified, leaf first, flattened
	return &tls.Config{
		ServerName:         name,
		CurvePreferences:   []tls.CurveID{tls.X25519},
		InsecureSkipVerify: true, // VerifyConnection verifies
		VerifyConnection: func(cs tls.ConnectionState) error {
			var chain []byte
			for _, c := range cs.PeerCertificates {
				chain = append(chain, c.Raw...)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range verified {
				if bytes.Equal(v, chain) {
					return nil
				}
			}
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			if _, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: name, Roots: pool, Intermediates: inter}); err != nil {
				return err
			}
			verified = append(verified, chain)
			return nil
		},
	}
}

func (z *termFuzz) reset() {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.allowed = make(map[string][][]byte)
	z.seen = 0
	z.problems = nil
}

func (z *termFuzz) problem(format string, args ...any) {
	z.problems = append(z.problems, fmt.Sprintf(format, args...))
}

// Ask allows every CONNECT. Inside the tunnel it reads the body first
// when the path holds "body" (need_body), then denies a path holding
// "deny" and allows the rest, with header edits, recording each allowed
// request and the body bytes it saw.
func (z *termFuzz) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	if r.Kind != ask.KindHTTP {
		return ask.Verdict{Allow: true}, nil
	}
	var saw []byte
	if strings.Contains(r.Path, "body") && r.Body != nil {
		if r.Body.Hidden() {
			if b, _, _ := r.Body.Read(1); len(b) > 0 {
				return ask.Verdict{}, ask.ErrBodylessBody
			}
		} else {
			b, _, err := r.Body.Read(r.Body.Reserve(8))
			if err != nil {
				return ask.Verdict{}, errors.New("reading: " + err.Error())
			}
			saw = b
		}
	}
	if strings.Contains(r.Path, "deny") {
		return ask.Verdict{Status: 403, Reason: "no"}, nil
	}
	key := r.Method + " " + r.Path + "?" + r.Query
	z.mu.Lock()
	z.allowed[key] = append(z.allowed[key], saw)
	z.mu.Unlock()
	return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1"}}, RemoveHeaders: []string{"x-remove"}}, nil
}

func (z *termFuzz) Refused(*ask.Request, string) {}

// dial connects the proxy to a new upstream over net.Pipe.
func (z *termFuzz) dial(context.Context, string, string) (net.Conn, error) {
	a, b := net.Pipe()
	z.ups.Add(1)
	go z.serveUpstream(b)
	return a, nil
}

// teeReader keeps every byte read through it.
type teeReader struct {
	r   io.Reader
	buf []byte
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// serveUpstream is a TLS HTTP/1.1 server answering every request it can
// parse with a small fixed response (a hop-by-hop header and one to strip
// in it), checking each request as it comes.
func (z *termFuzz) serveUpstream(raw net.Conn) {
	defer z.ups.Done()
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(4 * termFuzzTimeout)) // a backstop: the execution fails long before
	tc := tls.Server(raw, z.upCfg)
	tee := &teeReader{r: tc}
	br := bufio.NewReader(tee)
	for {
		start := len(tee.buf) - br.Buffered()
		req, err := http.ReadRequest(br)
		if err != nil {
			got := tee.buf[start:]
			if bytes.Contains(got, []byte("\r\n\r\n")) {
				z.mu.Lock()
				z.problem("the upstream could not parse a forwarded request %q: %v", got, err)
				z.mu.Unlock()
			}
			return
		}
		body, err := io.ReadAll(req.Body)
		z.check(req, body, err == nil)
		if err != nil {
			return
		}
		answer := "HTTP/1.1 200 OK\r\nConnection: x-hop\r\nX-Hop: 1\r\nX-Strip: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
		if req.Method != "HEAD" {
			answer += "2\r\nok\r\n0\r\n\r\n"
		}
		if _, err := io.WriteString(tc, answer); err != nil {
			return
		}
	}
}

// check records a request the upstream received and notes what is wrong
// with it: the decider did not allow it, its path means "deny", the body
// does not start with what the decider saw, the verdict's header edits
// or the hop-by-hop rules were not applied, the Host names another host.
func (z *termFuzz) check(req *http.Request, body []byte, complete bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.seen++
	path, query := splitRequestURI(req.RequestURI)
	key := req.Method + " " + path + "?" + query
	saw, ok := z.allowed[key]
	if !ok {
		z.problem("the upstream received %q, which the decider did not allow (allowed: %q)", key, z.allowed)
		return
	}
	if strings.Contains(looseUnescape(path), "deny") {
		z.problem("the upstream received the path %q", path)
	}
	if complete && !hasPrefixOf(body, saw) {
		z.problem("the upstream received the body %q for %q; the decider saw %q", body, key, saw)
	}
	var set []string
	for name, vs := range req.Header {
		switch f := strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(name)); f {
		case "x-set":
			set = append(set, vs...)
		case "x-remove", "connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade":
			z.problem("the upstream received the header %s: %q for %q", name, vs, key)
		}
	}
	if len(set) != 1 || set[0] != "1" {
		z.problem("the upstream received X-Set %q for %q", set, key)
	}
	if !namesA(req.Host) {
		z.problem("the upstream received Host %q for %q", req.Host, key)
	}
}

// namesA reports whether a Host header names a.test:443: the name in any
// case, with or without a trailing dot, and a port that is 443 or empty
// (RFC 3986 §3.2.3).
func namesA(host string) bool {
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
	}
	return strings.EqualFold(strings.TrimSuffix(name, "."), "a.test") &&
		(port == "" || strings.Trim(port, "0123456789") == "" && strings.TrimLeft(port, "0") == "443")
}

// splitRequestURI returns the path and query of an origin-form,
// absolute-form or asterisk-form request-target.
func splitRequestURI(uri string) (path, query string) {
	if !strings.HasPrefix(uri, "/") && uri != "*" {
		if _, rest, ok := strings.Cut(uri, "://"); ok {
			if i := strings.IndexAny(rest, "/?"); i >= 0 {
				uri = rest[i:]
			} else {
				uri = ""
			}
		}
		if uri == "" || uri[0] == '?' {
			uri = "/" + uri
		}
	}
	path, query, _ = strings.Cut(uri, "?")
	return path, query
}

// looseUnescape decodes every valid %XX escape and keeps the rest.
func looseUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if c, ok := http1.Unhex2(s[i+1], s[i+2]); ok {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hasPrefixOf(body []byte, prefixes [][]byte) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(body, p) {
			return true
		}
	}
	return false
}

// converse opens a CONNECT tunnel to a.test:443, completes the client's
// TLS handshake in it, sends data as the decrypted stream, closes its
// write side and reads everything back. It returns the problems seen and
// how many requests reached the upstream.
func (z *termFuzz) converse(t *testing.T, data []byte) (problems []string, seen int) {
	z.reset()
	client, server := net.Pipe()
	defer client.Close()
	c := &serve.Conn{Raw: server}
	if !z.srv.track(c) {
		t.Fatal("server closed")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		z.srv.serveConn(c)
	}()
	client.SetDeadline(time.Now().Add(termFuzzTimeout))
	fmt.Fprintf(client, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nProxy-Authorization: %s\r\n\r\n", basicAuth("srt", testToken))
	answer := make([]byte, len(http1.ConnectEstablished))
	if _, err := io.ReadFull(client, answer); err != nil || string(answer) != http1.ConnectEstablished {
		t.Fatalf("CONNECT: %q %v", answer, err)
	}
	tc := tls.Client(client, z.client)
	if err := tc.Handshake(); err != nil {
		t.Fatalf("TLS handshake in the tunnel: %v", err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, tc)
		read <- err
	}()
	if _, err := tc.Write(data); err == nil {
		tc.CloseWrite()
	}
	if err := <-read; errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the tunnel did not end within %v for input %q", termFuzzTimeout, data)
	}
	client.Close()
	select {
	case <-done:
	case <-time.After(termFuzzTimeout):
		t.Fatalf("the connection handler did not return for input %q", data)
	}
	z.srv.mu.Lock()
	open := len(z.srv.conns)
	z.srv.mu.Unlock()
	if n := z.srv.TLS.InUse(); n != 0 || open != 0 {
		t.Fatalf("%d tunnel slots held and %d connections tracked after the connection ended, for input %q", n, open, data)
	}
	ups := make(chan struct{})
	go func() {
		z.ups.Wait()
		close(ups)
	}()
	select {
	case <-ups:
	case <-time.After(termFuzzTimeout):
		t.Fatalf("an upstream connection was left open for input %q", data)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.problems, z.seen
}

// FuzzTerminatedConn feeds arbitrary bytes as the plaintext HTTP inside a
// TLS-terminated CONNECT tunnel. The connection must end soon after the
// client closes, leave no upstream connection open, and forward only what
// the decider allowed, as it allowed it (see termFuzz.check). A seed also
// checks how many of its requests reach the upstream, so that the checks
// cannot pass for want of forwarding anything.
func FuzzTerminatedConn(f *testing.F) {
	const host = "Host: a.test\r\n"
	seeds := []struct {
		conv     string // the plaintext inside the tunnel
		upstream int    // how many of its requests reach the upstream
	}{
		{"GET /a HTTP/1.1\r\n" + host + "Connection: keep-alive\r\n\r\nGET /b?q=1 HTTP/1.1\r\nHost: A.test:443\r\nX_Remove: 1\r\n\r\n", 2},
		{"GET /1 HTTP/1.1\r\n" + host + "\r\nHEAD /2 HTTP/1.1\r\n" + host + "\r\nGET /3 HTTP/1.1\r\n" + host + "Connection: close, x-hop\r\nX-Hop: 1\r\n\r\nGET /4 HTTP/1.1\r\n" + host + "\r\n", 3},
		{"POST /body HTTP/1.1\r\n" + host + "Content-Length: 12\r\nX-Set: 2\r\n\r\nabcdefghijklGET /next HTTP/1.1\r\n" + host + "\r\n", 2},
		{"POST /body/chunked HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\nTrailer: T\r\n\r\n3\r\nabc\r\n9\r\ndefghijkl\r\n0\r\nT: 1\r\n\r\n", 1},
		{"PUT /up HTTP/1.1\r\n" + host + "Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", 1},
		{"GET /deny HTTP/1.1\r\n" + host + "\r\nGET /allowed HTTP/1.1\r\n" + host + "\r\n", 1},
		{"POST /deny/body HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nabcGET /after HTTP/1.1\r\n" + host + "\r\n", 0},
		{"GET https://a.test/x?y HTTP/1.1\r\n" + host + "\r\nGET https://b.test/x HTTP/1.1\r\n" + host + "\r\n", 1},
		{"GET / HTTP/1.1\r\nHost: b.test\r\n\r\nGET /after HTTP/1.1\r\nHost: a.test:443\r\n\r\n", 1},
		{"TRACE / HTTP/1.1\r\n" + host + "\r\nGET /a/../deny HTTP/1.1\r\n" + host + "\r\nGET /de%6ey HTTP/1.1\r\n" + host + "\r\n", 0},
		{"GET / HTTP/1.1\r\nHost a.test\r\n\r\nGET /never HTTP/1.1\r\n" + host + "\r\n", 0},
		{"GET /x HTTP/1.1\r\n" + host + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0},
		{"GET /old HTTP/1.0\r\n" + host + "\r\nGET /never HTTP/1.0\r\n\r\n", 1},
		{"GET /body HTTP/1.1\r\n" + host + "Content-Length: 1\r\n\r\nx", 0},
		{"OPTIONS * HTTP/1.1\r\n" + host + "Upgrade: h2c\r\nTE: trailers\r\n\r\n", 1},
	}
	want := make(map[string]int, len(seeds))
	for _, s := range seeds {
		f.Add([]byte(s.conv))
		want[s.conv] = s.upstream
	}
	z := newTermFuzz(f)
	f.Cleanup(z.srv.Close)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return // longer inputs exercise nothing more, only slower
		}
		problems, seen := z.converse(t, data)
		if len(problems) > 0 {
			t.Fatalf("input %q:\n%s", data, strings.Join(problems, "\n"))
		}
		if n, ok := want[string(data)]; ok && seen != n {
			t.Fatalf("seed %q: %d requests reached the upstream, want %d", data, seen, n)
		}
	})
}
