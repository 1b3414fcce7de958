package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// upstream is a loopback HTTP server that records what reaches it.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	hosts   []string
	remotes []string
	uris    []string
	bodies  []string
}

func newUpstream(t testing.TB, handler func(w http.ResponseWriter, r *http.Request)) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.hosts = append(u.hosts, r.Host)
		u.remotes = append(u.remotes, r.RemoteAddr)
		u.uris = append(u.uris, r.RequestURI)
		u.bodies = append(u.bodies, string(body))
		u.mu.Unlock()
		if handler != nil {
			handler(w, r)
			return
		}
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	t.Cleanup(u.Close)
	return u
}

func TestKeepAlive(t *testing.T) {
	up := newUpstream(t, nil)
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, nil)
	c := dialProxy(t, addr)
	br := bufio.NewReader(c)
	for i := range 5 {
		fmt.Fprintf(c, "GET %s/r%d HTTP/1.1\r\nHost: %s\r\n\r\n", up.URL, i, up.Listener.Addr())
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("hello /r%d", i); string(body) != want || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d: %d %q close=%v", i, resp.StatusCode, body, resp.Close)
		}
	}
	// Pipelined: three requests in one write.
	var b bytes.Buffer
	for i := range 3 {
		fmt.Fprintf(&b, "GET %s/p%d HTTP/1.1\r\nHost: x\r\n\r\n", up.URL, i)
	}
	c.Write(b.Bytes())
	for i := range 3 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("pipelined %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("hello /p%d", i); string(body) != want {
			t.Fatalf("pipelined %d: %q", i, body)
		}
	}
	if n := len(a.requests()); n != 8 {
		t.Errorf("asked %d times, want once per request (8)", n)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, r := range up.remotes {
		if r != up.remotes[0] {
			t.Errorf("upstream connections %v: not kept alive", up.remotes)
			break
		}
	}
	r := a.requests()[0]
	want := ask.Request{Kind: ask.KindHTTP, Method: "GET", Host: "127.0.0.1", Port: up.Listener.Addr().(*net.TCPAddr).Port,
		HostHeader: up.Listener.Addr().String(), Path: "/r0"}
	if r.Kind != want.Kind || r.Method != want.Method || r.Host != want.Host || r.Port != want.Port ||
		r.HostHeader != want.HostHeader || r.Path != want.Path || r.Query != "" || r.Headers != nil {
		t.Errorf("asked %+v, want %+v", r, want)
	}
}

func TestHopByHopRemoved(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Resp-Hop")
		w.Header().Set("X-Resp-Hop", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Proxy-Authenticate", `Basic realm="upstream"`)
		w.Header().Set("X-Resp-Keep", "yes")
		io.WriteString(w, "ok")
	})
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) { s.Token = testToken })
	req := "GET " + up.URL + "/h?q=1 HTTP/1.1\r\n" +
		"Host: " + up.Listener.Addr().String() + "\r\n" +
		"Proxy-Authorization: " + basicAuth("srt", testToken) + "\r\n" +
		"Connection: X-Custom, keep-alive\r\n" +
		"X-Custom: 1\r\n" +
		"Keep-Alive: 300\r\n" +
		"Proxy-Connection: keep-alive\r\n" +
		"TE: trailers\r\n" +
		"Trailer: X-T\r\n" +
		"Upgrade: websocket\r\n" +
		"X-Keep: yes\r\n" +
		"x-lower: kept\r\n" +
		"\r\n"
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(req))
	br := bufio.NewReader(c)
	head := readResponseHead(t, br)
	for _, h := range []string{"X-Resp-Hop", "Keep-Alive", "Proxy-Authenticate", "Connection"} {
		if strings.Contains(head, h+":") {
			t.Errorf("response header %s relayed:\n%s", h, head)
		}
	}
	if !strings.Contains(head, "X-Resp-Keep: yes\r\n") || !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") {
		t.Errorf("response head:\n%s", head)
	}
	up.mu.Lock()
	got := up.headers[0]
	host, uri := up.hosts[0], up.uris[0]
	up.mu.Unlock()
	for _, h := range []string{"Connection", "X-Custom", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Upgrade", "Proxy-Authorization"} {
		if _, ok := got[h]; ok {
			t.Errorf("hop-by-hop %s reached the upstream: %v", h, got)
		}
	}
	if got.Get("X-Keep") != "yes" || got.Get("X-Lower") != "kept" {
		t.Errorf("end-to-end headers lost: %v", got)
	}
	if _, ok := got["User-Agent"]; ok {
		t.Errorf("a User-Agent the client did not send: %v", got)
	}
	if host != up.Listener.Addr().String() || uri != "/h?q=1" {
		t.Errorf("upstream saw Host %q, request-target %q", host, uri)
	}
	// The decider saw the hop-by-hop headers (but not our credential).
	r := a.requests()[0]
	if r.Headers["proxy-connection"] == nil || r.Headers["proxy-authorization"] != nil || r.Query != "q=1" {
		t.Errorf("asked %+v", r)
	}
}

func TestProxyAuthorizationForwardedWithoutToken(t *testing.T) {
	up := newUpstream(t, nil)
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	rawExchange(t, addr, []byte("GET "+up.URL+"/ HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\nConnection: close\r\n\r\n"))
	up.mu.Lock()
	defer up.mu.Unlock()
	if got := up.headers[0].Get("Proxy-Authorization"); got != "Basic Zm9vOmJhcg==" {
		t.Errorf("Proxy-Authorization not ours, yet dropped: %q", got)
	}
}

func TestVerdictHeaderEdits(t *testing.T) {
	up := newUpstream(t, nil)
	a := &fakeAsker{answer: func(*ask.Request) (ask.Verdict, error) {
		return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1", "2"}},
			RemoveHeaders: []string{"x_remove"}}, nil
	}}
	addr, _ := startProxy(t, a, func(s *Server) { s.Rules.PlaintextHeaderSet = true })
	rawExchange(t, addr, []byte("GET "+up.URL+"/ HTTP/1.1\r\nHost: x\r\nX-Remove: a\r\nX.Set: old\r\nX-Other: b\r\nConnection: close\r\n\r\n"))
	up.mu.Lock()
	defer up.mu.Unlock()
	h := up.headers[0]
	if h.Get("X-Remove") != "" || h.Get("X.Set") != "" || strings.Join(h["X-Set"], ",") != "1,2" || h.Get("X-Other") != "b" {
		t.Errorf("upstream headers %v", h)
	}
}

func TestRequestBodies(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "len=%d te=%v", r.ContentLength, r.TransferEncoding)
	})
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	c := dialProxy(t, addr)
	br := bufio.NewReader(c)
	exchange := func(req string) string {
		t.Helper()
		io.WriteString(c, req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := exchange("POST " + up.URL + "/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"); got != "len=5 te=[]" {
		t.Errorf("Content-Length body: %q", got)
	}
	if got := exchange("POST " + up.URL + "/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"); got != "len=-1 te=[chunked]" {
		t.Errorf("chunked body: %q", got)
	}
	// 100-continue: the proxy invites the body.
	io.WriteString(c, "PUT "+up.URL+"/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
	if line, _ := br.ReadString('\n'); line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("got %q, want a 100 Continue", line)
	}
	br.ReadString('\n')
	io.WriteString(c, "abc")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "len=3 te=[]" {
		t.Errorf("100-continue body: %q", b)
	}
	// An empty body keeps the Content-Length: 0 it came with; none is made
	// up for a request without one.
	exchange("POST " + up.URL + "/ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	exchange("DELETE " + up.URL + "/ HTTP/1.1\r\nHost: x\r\n\r\n")
	up.mu.Lock()
	defer up.mu.Unlock()
	if want := []string{"hello", "hello world", "abc", "", ""}; fmt.Sprint(up.bodies) != fmt.Sprint(want) {
		t.Errorf("upstream bodies %q, want %q", up.bodies, want)
	}
	if cl := up.headers[3]["Content-Length"]; fmt.Sprint(cl) != "[0]" {
		t.Errorf("empty POST: Content-Length %q upstream", cl)
	}
	if cl, ok := up.headers[4]["Content-Length"]; ok {
		t.Errorf("DELETE without a body: Content-Length %q upstream", cl)
	}
}

func TestResponseFraming(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(204)
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "fixed")
		}
	})
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	c := dialProxy(t, addr)
	br := bufio.NewReader(c)
	for _, tt := range []struct{ method, path, body, te string }{
		{"GET", "/stream", "part0;part1;part2;", "chunked"},
		{"GET", "/fixed", "fixed", ""},
		{"HEAD", "/fixed", "", ""},
		{"GET", "/empty", "", ""},
	} {
		fmt.Fprintf(c, "%s %s%s HTTP/1.1\r\nHost: x\r\n\r\n", tt.method, up.URL, tt.path)
		resp, err := http.ReadResponse(br, &http.Request{Method: tt.method})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != tt.body || strings.Join(resp.TransferEncoding, ",") != tt.te {
			t.Errorf("%s %s: %q te=%v", tt.method, tt.path, b, resp.TransferEncoding)
		}
		if tt.method == "HEAD" && resp.ContentLength != 5 {
			t.Errorf("HEAD lost its Content-Length: %d", resp.ContentLength)
		}
	}
	// An HTTP/1.0 client gets a close-delimited stream.
	fmt.Fprintf(c, "GET %s/stream HTTP/1.0\r\n\r\n", up.URL)
	all, _ := io.ReadAll(br)
	if !strings.Contains(string(all), "Connection: close\r\n") || !strings.HasSuffix(string(all), "\r\n\r\npart0;part1;part2;") {
		t.Errorf("HTTP/1.0 stream: %q", all)
	}
}

func TestConnectTunnel(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) { s.Token = testToken })
	c := dialProxy(t, addr)
	target := echo.Addr().String()
	// The first bytes of the tunnel travel with the CONNECT.
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\nearly bytes|", target, target, basicAuth("srt.abc", testToken))
	want := http1.ConnectEstablished + "early bytes|"
	if got := readN(t, c, len(want)); string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	msg := bytes.Repeat([]byte("0123456789"), 100000)
	go c.Write(msg)
	if got := readN(t, c, len(msg)); !bytes.Equal(got, msg) {
		t.Fatal("echo mismatch")
	}
	c.(*net.TCPConn).CloseWrite()
	if rest, err := io.ReadAll(c); err != nil || len(rest) != 0 {
		t.Fatalf("after half-close: %q, %v", rest, err)
	}
	r := a.requests()[0]
	if r.Kind != ask.KindConnect || r.Method != "CONNECT" || r.Path != "*" || r.User != "srt.abc" || r.Host != "127.0.0.1" || r.Headers != nil {
		t.Errorf("asked %+v", r)
	}
}

func TestDecisionLog(t *testing.T) {
	up := newUpstream(t, nil)
	var mu sync.Mutex
	var buf bytes.Buffer
	w := zerolog.SyncWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}))
	a := &fakeAsker{answer: func(r *ask.Request) (ask.Verdict, error) {
		if r.Path == "/deny" {
			return ask.Verdict{Status: 403, Reason: "host is on the deny list"}, nil
		}
		return ask.Verdict{Allow: true}, nil
	}}
	addr, srv := startProxy(t, a, func(s *Server) {
		s.Token = testToken
		s.Logger = zerolog.New(w)
	})
	auth := "Proxy-Authorization: " + basicAuth("srt.x", testToken) + "\r\n"
	rawExchange(t, addr, []byte("POST "+up.URL+"/ok HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"+auth+"\r\nabcGET "+up.URL+"/deny HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+auth+"\r\n"))
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log lines:\n%s", buf.String())
	}
	var first, second map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	for _, k := range []string{"decision", "reason", "kind", "host", "port", "user", "addr", "bytes_up", "bytes_down", "duration_ms"} {
		if _, ok := first[k]; !ok {
			t.Errorf("key %s missing: %s", k, lines[0])
		}
	}
	if first["decision"] != "allow" || first["kind"] != "http" || first["user"] != "srt.x" || first["addr"] != up.Listener.Addr().String() ||
		first["bytes_up"] != 3.0 || first["bytes_down"] != 9.0 {
		t.Errorf("first record %s", lines[0])
	}
	if second["decision"] != "deny" || second["reason"] != "host is on the deny list" || second["addr"] != "" {
		t.Errorf("second record %s", lines[1])
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestShutdown(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	s := &Server{Asker: &fakeAsker{}, Grace: 200 * time.Millisecond}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", echo.Addr())
	readN(t, c, len(http1.ConnectEstablished))
	idle, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	s.Shutdown()
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("Shutdown took %v with a tunnel open (grace 200ms)", d)
	}
	if err := <-done; err != ErrServerClosed {
		t.Errorf("Serve: %v", err)
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("tunnel not closed cleanly: %v", err)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Error("still accepting")
	}
}

// rawUpstream is a loopback HTTP/1.1 server written by hand, for upstream
// misbehaviour net/http will not produce: for each request on the n-th
// connection (from 1) it calls answer with the connection and the index
// of the request on it (from 0); answer writes what it likes and reports
// whether to go on reading. It returns the address and counts of the
// connections and requests so far.
func rawUpstream(t *testing.T, answer func(c net.Conn, n, i int, r *http.Request) bool) (addr string, conns, reqs func() int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	nc, nr := 0, 0
	serveEach(t, l, func(c net.Conn) {
		mu.Lock()
		nc++
		n := nc
		mu.Unlock()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			mu.Lock()
			nr++
			mu.Unlock()
			if !answer(c, n, i, r) {
				return
			}
		}
	})
	count := func(p *int) func() int {
		return func() int { mu.Lock(); defer mu.Unlock(); return *p }
	}
	return l.Addr().String(), count(&nc), count(&nr)
}

// answerMethodPath answers r with its method and path, kept alive.
func answerMethodPath(c net.Conn, r *http.Request) {
	body := r.Method + " " + r.URL.Path
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// oneShotUpstream answers the first request on each connection with a
// kept-alive response, then reads the next request and closes without a
// word: an upstream closing its idle connection as a request arrives.
func oneShotUpstream(t *testing.T) (addr string, conns, reqs func() int) {
	return rawUpstream(t, func(c net.Conn, _, i int, r *http.Request) bool {
		if i > 0 {
			return false
		}
		answerMethodPath(c, r)
		return true
	})
}

// TestRetryOnlyIdempotent: a request that meets a kept upstream connection
// closing is sent again on a new connection only when its method is
// idempotent; a POST gets the 502 instead of reaching the upstream twice.
func TestRetryOnlyIdempotent(t *testing.T) {
	for _, tc := range []struct {
		method string
		retry  bool
	}{{"GET", true}, {"DELETE", true}, {"POST", false}, {"PATCH", false}} {
		t.Run(tc.method, func(t *testing.T) {
			up, conns, reqs := oneShotUpstream(t)
			addr, _ := startProxy(t, &fakeAsker{}, nil)
			send := proxyClient(t, addr)
			if got := send("GET", "http://"+up+"/first"); got != "200 GET /first" {
				t.Fatalf("first request: %q", got)
			}
			got := send(tc.method, "http://"+up+"/second")
			if tc.retry {
				if got != "200 "+tc.method+" /second" || conns() != 2 || reqs() != 3 {
					t.Errorf("%q after %d connections, %d requests; want it sent again on a second connection", got, conns(), reqs())
				}
				return
			}
			if !strings.HasPrefix(got, "502 ") || conns() != 1 || reqs() != 2 {
				t.Errorf("%q after %d connections, %d requests; want 502 and no second attempt", got, conns(), reqs())
			}
		})
	}
}

// TestKeptConnectionChecked: a kept upstream connection that the upstream
// has closed, or on which it sent bytes nobody asked for, is not used
// again: the next request, a POST (never resent), goes on a new
// connection and gets its own answer.
func TestKeptConnectionChecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(c net.Conn) // what the upstream does after its first answer
	}{
		{"closed", func(c net.Conn) { c.Close() }},
		{"unasked bytes", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, conns, _ := rawUpstream(t, func(c net.Conn, n, i int, r *http.Request) bool {
				answerMethodPath(c, r)
				if n == 1 && i == 0 {
					tc.after(c)
				}
				return true
			})
			addr, _ := startProxy(t, &fakeAsker{}, nil)
			send := proxyClient(t, addr)
			if got := send("GET", "http://"+up+"/one"); got != "200 GET /one" {
				t.Fatalf("first: %q", got)
			}
			time.Sleep(100 * time.Millisecond) // the FIN or the stray bytes arrive
			if got := send("POST", "http://"+up+"/two"); got != "200 POST /two" {
				t.Errorf("second: %q, want the answer to the POST on a new connection", got)
			}
			if n := conns(); n != 2 {
				t.Errorf("%d upstream connections, want 2", n)
			}
		})
	}
}

// TestBrokenBodyCutsUpstream: a client whose chunked body turns malformed
// after the request went upstream gets its connection closed, and the
// upstream leg is cut, rather than both waiting on each other for ever.
func TestBrokenBodyCutsUpstream(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	upstreamEnded := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			upstreamEnded <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		r, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			upstreamEnded <- err
			return
		}
		_, err = io.Copy(io.Discard, r.Body) // waits for the rest, as a server does
		upstreamEnded <- err
	}()
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	c := dialProxy(t, addr)
	up := l.Addr().String()
	fmt.Fprintf(c, "POST http://%s/ HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX", up, up)
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the client connection did not end: %v (read %q)", err, got)
	}
	if len(got) != 0 {
		t.Errorf("the client got %q; a request whose body failed gets no answer", got)
	}
	select {
	case err := <-upstreamEnded:
		if err == nil {
			t.Error("the upstream read a complete body")
		}
	case <-time.After(10 * time.Second):
		t.Error("the upstream leg was not cut")
	}
}
