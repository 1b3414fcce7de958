package dial

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// recorder is a Dial that records every address and dials a loopback
// listener instead of (or as) that address.
type recorder struct {
	mu     sync.Mutex
	dialed []string
	fail   map[string]bool // addresses whose dial fails
	to     string          // where every dial really goes
}

func (r *recorder) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	r.dialed = append(r.dialed, addr)
	fail := r.fail[addr]
	r.mu.Unlock()
	if fail {
		return nil, errors.New("connection refused (fake)")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, r.to)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dialed...)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
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
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return l
}

func resolver(calls *atomic.Int32, m map[string][]string) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(_ context.Context, network, host string) ([]netip.Addr, error) {
		calls.Add(1)
		if network != "ip" {
			return nil, fmt.Errorf("network %q", network)
		}
		var out []netip.Addr
		for _, s := range m[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if out == nil {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

func allowLiterals(t *testing.T, entries ...string) *policy.AddressPolicy {
	t.Helper()
	p := &policy.AddressPolicy{}
	for _, e := range entries {
		pat, err := policy.ParseAllowPattern(e)
		if err != nil {
			t.Fatal(err)
		}
		p.Allowed = append(p.Allowed, pat)
	}
	return p
}

func noHostAddrs() []netip.Addr { return nil }

func TestDirect(t *testing.T) {
	l := listen(t)
	names := map[string][]string{
		"loop.test":   {"127.0.0.1"},
		"mixed.test":  {"127.0.0.2", "192.0.2.10", "::ffff:127.0.0.1", "192.0.2.11"},
		"meta.test":   {"169.254.169.254", "fd00:ec2::254"},
		"mapped.test": {"::ffff:192.0.2.20"},
		"self.test":   {"198.51.100.7"},
	}
	tests := []struct {
		name     string
		host     string
		port     int
		policy   *policy.AddressPolicy
		fail     map[string]bool
		dialed   []string
		refused  string // the AddressRefusedError reason
		unreach  bool
		resolves bool
	}{
		{name: "IP literal skips the check and the resolver", host: "127.0.0.1", port: 80, dialed: []string{"127.0.0.1:80"}},
		{name: "IPv6 literal", host: "::1", port: 443, dialed: []string{"[::1]:443"}},
		{name: "name resolving to loopback refused", host: "loop.test", port: 8765, refused: "resolved to a loopback address", resolves: true},
		{name: "exempt literal admits it", host: "loop.test", port: 8765, policy: allowLiterals(t, "127.0.0.1:8765"),
			dialed: []string{"127.0.0.1:8765"}, resolves: true},
		{name: "exemption is port-aware", host: "loop.test", port: 8766, policy: allowLiterals(t, "127.0.0.1:8765"),
			refused: "resolved to a loopback address", resolves: true},
		{name: "mixed answers dial only survivors, in order", host: "mixed.test", port: 80,
			dialed: []string{"192.0.2.10:80"}, resolves: true},
		{name: "next survivor after a failed dial", host: "mixed.test", port: 80, fail: map[string]bool{"192.0.2.10:80": true},
			dialed: []string{"192.0.2.10:80", "192.0.2.11:80"}, resolves: true},
		{name: "every survivor fails", host: "mixed.test", port: 80, fail: map[string]bool{"192.0.2.10:80": true, "192.0.2.11:80": true},
			dialed: []string{"192.0.2.10:80", "192.0.2.11:80"}, unreach: true, resolves: true},
		{name: "classes listed once in priority order", host: "meta.test", port: 80,
			refused: "resolved to a link-local address / a cloud metadata address", resolves: true},
		{name: "mapped answer unmapped", host: "mapped.test", port: 80, dialed: []string{"192.0.2.20:80"}, resolves: true},
		{name: "this host's address refused", host: "self.test", port: 80, refused: "resolved to one of this host's addresses", resolves: true},
		{name: "listed range", host: "mapped.test", port: 80, policy: &policy.AddressPolicy{DeniedRanges: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}},
			refused: "resolved to a listed address", resolves: true},
		{name: "no such host", host: "nowhere.test", port: 80, unreach: true, resolves: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			rec := &recorder{to: l.Addr().String(), fail: tt.fail}
			d := &Dialer{
				Resolve:   resolver(&calls, names),
				Policy:    func() *policy.AddressPolicy { return tt.policy },
				HostAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("198.51.100.7")} },
				Dial:      rec.dial,
			}
			c, dialed, err := d.Tunnel(context.Background(), tt.host, tt.port)
			if c != nil {
				c.Close()
			}
			var refused *AddressRefusedError
			var unreach *UnreachableError
			switch {
			case tt.refused != "":
				if !errors.As(err, &refused) || refused.Reason != tt.refused {
					t.Fatalf("err %v, want refusal %q", err, tt.refused)
				}
				if want := "Connection to " + tt.host + " blocked: " + tt.refused; err.Error() != want {
					t.Errorf("text %q, want %q", err, want)
				}
			case tt.unreach:
				if !errors.As(err, &unreach) || !strings.HasPrefix(err.Error(), "upstream unreachable: "+tt.host) {
					t.Fatalf("err %v, want UnreachableError", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if dialed.Addr != tt.dialed[len(tt.dialed)-1] || dialed.Parent != nil {
					t.Errorf("Dialed %+v", dialed)
				}
			}
			if got := rec.list(); fmt.Sprint(got) != fmt.Sprint(tt.dialed) {
				t.Errorf("dialled %v, want %v", got, tt.dialed)
			}
			if want := map[bool]int32{true: 1, false: 0}[tt.resolves]; calls.Load() != want {
				t.Errorf("resolved %d times, want %d", calls.Load(), want)
			}
		})
	}
}

func TestPolicyChangesLive(t *testing.T) {
	l := listen(t)
	var cur atomic.Pointer[policy.AddressPolicy]
	var calls atomic.Int32
	d := &Dialer{
		Resolve:   resolver(&calls, map[string][]string{"app.test": {"127.0.0.1"}}),
		Policy:    cur.Load,
		HostAddrs: noHostAddrs,
		Dial:      (&recorder{to: l.Addr().String()}).dial,
	}
	if _, _, err := d.Tunnel(context.Background(), "app.test", 80); err == nil {
		t.Fatal("loopback admitted without an exemption")
	}
	cur.Store(allowLiterals(t, "127.0.0.1"))
	c, _, err := d.Tunnel(context.Background(), "app.test", 80)
	if err != nil {
		t.Fatalf("after the update: %v", err)
	}
	c.Close()
}

func TestNotCanonical(t *testing.T) {
	d := &Dialer{Resolve: func(context.Context, string, string) ([]netip.Addr, error) {
		t.Fatal("resolved a host that is not canonical")
		return nil, nil
	}}
	for _, h := range []string{"Example.com", "example.com.", "a\r\nb", "[::1]", "127.1", ""} {
		if _, _, err := d.Tunnel(context.Background(), h, 80); err == nil {
			t.Errorf("%q dialled", h)
		}
	}
	if _, _, err := d.Tunnel(context.Background(), "example.com", 0); err == nil {
		t.Error("port 0 dialled")
	}
}

// parentServer is a tiny HTTP proxy: CONNECT tunnels to where route says,
// plain requests are answered by itself. It records what it receives.
type parentServer struct {
	l     net.Listener
	mu    sync.Mutex
	lines []string
	auth  []string
	route func(target string) string // CONNECT target → address to dial; "" refuses
	early string                     // sent after the 200, before tunnelling
	mute  bool                       // never answer
}

func startParent(t *testing.T, tlsConfig *tls.Config, route func(string) string) *parentServer {
	t.Helper()
	p := &parentServer{route: route}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	p.l = l
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *parentServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.lines = append(p.lines, req.Method+" "+req.RequestURI)
		p.auth = append(p.auth, req.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if p.mute {
			time.Sleep(time.Hour)
		}
		if req.Method != "CONNECT" {
			io.Copy(io.Discard, req.Body)
			body := "via parent: " + req.RequestURI
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			continue
		}
		to := p.route(req.RequestURI)
		if to == "" {
			io.WriteString(c, "HTTP/1.1 403 Forbidden by parent\r\nContent-Length: 0\r\n\r\n")
			return
		}
		up, err := net.Dial("tcp", to)
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\nVia: test\r\n\r\n"+p.early)
		go func() { io.Copy(up, br); up.Close() }()
		io.Copy(c, up)
		return
	}
}

func (p *parentServer) seen() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...), append([]string(nil), p.auth...)
}

func TestTunnelViaParent(t *testing.T) {
	echo := listen(t)
	route := func(target string) string {
		if target == "x.test:443" {
			return echo.Addr().String()
		}
		return ""
	}
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		tls    bool
		early  string
		scheme string
	}{
		{"http parent", false, "", "http"},
		{"http parent, early bytes after the 200", false, "hello|", "http"},
		{"https parent", true, "", "https"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg *tls.Config
			if tt.tls {
				cfg = serverTLS
			}
			p := startParent(t, cfg, route)
			p.early = tt.early
			u, _ := url.Parse(tt.scheme + "://user:secret@" + p.l.Addr().String())
			d := &Dialer{
				Parent:    &ParentProxy{HTTPS: u, TLSConfig: &tls.Config{RootCAs: ca.Pool}},
				HostAddrs: noHostAddrs,
				Resolve: func(context.Context, string, string) ([]netip.Addr, error) {
					t.Error("a parent-proxied name was resolved locally")
					return nil, errors.New("no")
				},
			}
			c, dialed, err := d.Tunnel(context.Background(), "x.test", 443)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if dialed.Parent != u || dialed.Addr != p.l.Addr().String() {
				t.Errorf("Dialed %+v", dialed)
			}
			if tt.early != "" {
				if got := make([]byte, len(tt.early)); readFull(c, got) != nil || string(got) != tt.early {
					t.Fatalf("early bytes %q", got)
				}
			}
			io.WriteString(c, "ping")
			got := make([]byte, 4)
			if err := readFull(c, got); err != nil || string(got) != "ping" {
				t.Fatalf("echo %q %v", got, err)
			}
			lines, auth := p.seen()
			if fmt.Sprint(lines) != "[CONNECT x.test:443]" || auth[0] != "Basic dXNlcjpzZWNyZXQ=" {
				t.Errorf("parent saw %q with %q", lines, auth)
			}
		})
	}
	t.Run("parent refuses", func(t *testing.T) {
		p := startParent(t, nil, route)
		u, _ := url.Parse("http://" + p.l.Addr().String())
		d := &Dialer{Parent: &ParentProxy{HTTP: u}}
		_, _, err := d.Tunnel(context.Background(), "y.test", 443)
		var unreach *UnreachableError
		if !errors.As(err, &unreach) || !strings.Contains(err.Error(), `refused CONNECT: "HTTP/1.1 403 Forbidden by parent"`) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("parent silent", func(t *testing.T) {
		p := startParent(t, nil, route)
		p.mute = true
		u, _ := url.Parse("http://" + p.l.Addr().String())
		d := &Dialer{Parent: &ParentProxy{HTTP: u, HandshakeTimeout: 100 * time.Millisecond}}
		start := time.Now()
		_, _, err := d.Tunnel(context.Background(), "x.test", 443)
		var unreach *UnreachableError
		if !errors.As(err, &unreach) || time.Since(start) > 5*time.Second {
			t.Errorf("err %v after %v", err, time.Since(start))
		}
	})
	t.Run("NO_PROXY goes direct", func(t *testing.T) {
		p := startParent(t, nil, route)
		u, _ := url.Parse("http://" + p.l.Addr().String())
		d := &Dialer{Parent: &ParentProxy{HTTP: u, NoProxy: ParseNoProxy("direct.test")}, HostAddrs: noHostAddrs,
			Resolve: func(context.Context, string, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}}
		_, _, err := d.Tunnel(context.Background(), "direct.test", 443)
		var refused *AddressRefusedError
		if !errors.As(err, &refused) {
			t.Errorf("a direct name skipped the address check: %v", err)
		}
		if lines, _ := p.seen(); len(lines) != 0 {
			t.Errorf("parent saw %v", lines)
		}
	})
}

func readFull(c net.Conn, b []byte) error {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadFull(c, b)
	return err
}

func TestHTTP(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "direct %s %s", r.Host, r.RequestURI)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	p := startParent(t, nil, func(string) string { return "" })
	pu, _ := url.Parse("http://pu:pp@" + p.l.Addr().String())
	var calls atomic.Int32
	d := &Dialer{
		Resolve:   resolver(&calls, map[string][]string{"loop.test": {"127.0.0.1"}}),
		HostAddrs: noHostAddrs,
		Parent:    &ParentProxy{HTTP: pu, NoProxy: ParseNoProxy("loop.test")},
	}
	// get sends one request on a connection Dialer.HTTP opened, in the
	// form the proxy uses: absolute to a parent (with its credentials),
	// else origin form.
	get := func(host string, port int, target string) (string, Dialed, error) {
		c, dialed, err := d.HTTP(context.Background(), "http", host, port, nil)
		if err != nil {
			return "", dialed, err
		}
		defer c.Close()
		line := target
		auth := ""
		if dialed.Parent != nil {
			line = "http://" + net.JoinHostPort(host, fmt.Sprint(port)) + target
			auth = "Proxy-Authorization: " + ProxyAuthorization(dialed.Parent) + "\r\n"
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", line, host, auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", dialed, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), dialed, nil
	}
	// Loopback literal: direct even with a parent.
	if got, dialed, err := get("127.0.0.1", port, "/a?b"); err != nil || got != "direct 127.0.0.1 /a?b" || dialed.Parent != nil {
		t.Errorf("direct: %q %+v %v", got, dialed, err)
	}
	// A NO_PROXY name goes direct, through the address check.
	_, _, err = get("loop.test", port, "/")
	var refused *AddressRefusedError
	if !errors.As(err, &refused) || refused.Reason != "resolved to a loopback address" {
		t.Errorf("NO_PROXY name: %v", err)
	}
	// Anything else goes to the parent.
	if got, dialed, err := get("far.test", 80, "/x?y=1"); err != nil || got != "via parent: http://far.test:80/x?y=1" || dialed.Parent != pu {
		t.Errorf("via parent: %q %+v %v", got, dialed, err)
	}
	if _, auth := p.seen(); len(auth) != 1 || auth[0] != "Basic cHU6cHA=" {
		t.Errorf("parent credentials %q", auth)
	}
	// A host that is not canonical reaches nothing.
	if _, _, err := d.HTTP(context.Background(), "http", "Far.Test", 80, nil); err == nil {
		t.Error("a host not in canonical form was dialled")
	}
}
