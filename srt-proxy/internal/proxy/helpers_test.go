package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// fakeAsker answers with a function and records what it was asked.
type fakeAsker struct {
	mu      sync.Mutex
	answer  func(r *ask.Request) (ask.Verdict, error)
	asked   []ask.Request
	refused []string
}

func (a *fakeAsker) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	a.mu.Lock()
	a.asked = append(a.asked, *r)
	f := a.answer
	a.mu.Unlock()
	if f == nil {
		return ask.Verdict{Allow: true}, nil
	}
	return f(r)
}

func (a *fakeAsker) Refused(r *ask.Request, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refused = append(a.refused, r.Host+" "+reason)
}

func (a *fakeAsker) requests() []ask.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ask.Request(nil), a.asked...)
}

func (a *fakeAsker) refusals() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.refused...)
}

func allowAll(*ask.Request) (ask.Verdict, error) { return ask.Verdict{Allow: true}, nil }

func denyWith(reason string) func(*ask.Request) (ask.Verdict, error) {
	return func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{Status: 403, Reason: reason}, nil }
}

const testToken = "0123456789abcdef0123456789abcdef"

// startProxy runs a Server on a loopback port and returns its address. The
// server's dialer uses no host addresses (so tests do not depend on this
// machine's interfaces); configure adjusts the rest.
func startProxy(t testing.TB, asker ask.Asker, configure func(*Server)) (string, *Server) {
	t.Helper()
	s := &Server{
		Asker:  asker,
		Dialer: &dial.Dialer{HostAddrs: func() []netip.Addr { return nil }},
	}
	if configure != nil {
		configure(s)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
	})
	return l.Addr().String(), s
}

// fakeResolve maps names to addresses.
func fakeResolve(m map[string][]string) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(_ context.Context, _, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, s := range m[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// exempt is an address policy whose allowedDomains hold the given IP
// literals (the resolved-address exemption).
func exempt(t testing.TB, entries ...string) func() *policy.AddressPolicy {
	t.Helper()
	var pats []policy.Pattern
	for _, e := range entries {
		p, err := policy.ParseAllowPattern(e)
		if err != nil {
			t.Fatal(err)
		}
		pats = append(pats, p)
	}
	ap := &policy.AddressPolicy{Allowed: pats}
	return func() *policy.AddressPolicy { return ap }
}

// basicAuth is a Proxy-Authorization value.
func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// rawExchange sends req on a new connection and returns everything read
// until the proxy closes the connection.
func rawExchange(t testing.TB, addr string, req []byte) string {
	t.Helper()
	c := dialProxy(t, addr)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading: %v (got %q)", err, got)
	}
	return string(got)
}

// readN reads exactly n bytes.
func readN(t testing.TB, r io.Reader, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatalf("reading %d bytes: %v (got %q)", n, err, b)
	}
	return b
}

// readResponseHead reads one response head (through the blank line) from
// br and returns it.
func readResponseHead(t testing.TB, br *bufio.Reader) string {
	t.Helper()
	var sb strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a response head: %v (got %q)", err, sb.String()+line)
		}
		sb.WriteString(line)
		if line == "\r\n" {
			return sb.String()
		}
	}
}

// echoServer echoes every connection on a loopback port.
func echoServer(t testing.TB, network, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, l, func(c net.Conn) { io.Copy(c, c) })
	return l
}

// serveEach serves every connection l accepts with handle, on a goroutine
// of its own, and closes the connection after it; l closes at the test's
// end.
func serveEach(t testing.TB, l net.Listener, handle func(c net.Conn)) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
}

// dialProxy opens a client connection to the proxy at addr, closed at the
// test's end, with 10 s for all it does.
func dialProxy(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func portOf(t testing.TB, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// socksConnect performs a SOCKS5 handshake with username/password and a
// CONNECT for the given address bytes (atyp + addr + port) and returns the
// connection and the reply.
func socksConnect(t testing.TB, proxy, user, pass string, dest []byte) (net.Conn, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	b.Write([]byte{5, 1, 2})
	b.Write([]byte{1, byte(len(user))})
	b.WriteString(user)
	b.WriteByte(byte(len(pass)))
	b.WriteString(pass)
	b.Write([]byte{5, 1, 0})
	b.Write(dest)
	if _, err := c.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	got := readN(t, c, 2+2+10)
	return c, got
}

func socksDomain(name string, port int) []byte {
	b := []byte{3, byte(len(name))}
	b = append(b, name...)
	return append(b, byte(port>>8), byte(port))
}

func socksIP(a netip.Addr, port int) []byte {
	var b []byte
	if a.Is4() {
		b = append([]byte{1}, a.AsSlice()...)
	} else {
		b = append([]byte{4}, a.AsSlice()...)
	}
	return append(b, byte(port>>8), byte(port))
}

// connectParent is a tiny CONNECT proxy on loopback, standing for a
// corporate proxy: every tunnel goes to target, whatever it names. Each
// request line and Proxy-Authorization is sent on seen (when not nil).
func connectParent(t testing.TB, target string, seen chan<- string) net.Listener {
	t.Helper()
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, pl, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if seen != nil {
			seen <- req.Method + " " + req.RequestURI + " " + req.Header.Get("Proxy-Authorization")
		}
		if req.Method != "CONNECT" {
			io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		go io.Copy(up, br)
		io.Copy(c, up)
	})
	return pl
}

// proxyClient is a client connection to the proxy at addr; send sends an
// absolute-form request for rawURL (Host from it) and returns the
// response's status code and body, as "code body".
func proxyClient(t testing.TB, addr string) (send func(method, rawURL string) string) {
	t.Helper()
	c := dialProxy(t, addr)
	br := bufio.NewReader(c)
	return func(method, rawURL string) string {
		t.Helper()
		u, err := url.Parse(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, rawURL, u.Host)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", method, rawURL, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
}
