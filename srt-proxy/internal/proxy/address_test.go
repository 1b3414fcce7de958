package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

func TestResolvedAddressCheck(t *testing.T) {
	up := newUpstream(t, nil)
	port := up.Listener.Addr().(*net.TCPAddr).Port
	var mu sync.Mutex
	var dialed []string
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Dialer.Resolve = fakeResolve(map[string][]string{
			"myapp.test": {"127.0.0.1"},
			"mixed.test": {"127.0.0.2", "127.0.0.1", "::1"},
		})
		s.Dialer.Policy = exempt(t, fmt.Sprintf("127.0.0.1:%d", port))
		s.Dialer.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, address)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		}
	})
	get := func(target string) string {
		return rawExchange(t, addr, []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
	}
	// The allow-listed literal 127.0.0.1:<port> exempts the loopback answer.
	if got := get(fmt.Sprintf("http://myapp.test:%d/ok", port)); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "hello /ok") {
		t.Errorf("exempt: %q", got)
	}
	// On another port the exemption does not apply.
	if got := get(fmt.Sprintf("http://myapp.test:%d/", port+1)); !strings.Contains(got, "X-Proxy-Error: blocked-by-sandbox-runtime") {
		t.Errorf("other port: %q", got)
	}
	// Mixed answers: only the survivor is dialled.
	mu.Lock()
	dialed = nil
	mu.Unlock()
	if got := get(fmt.Sprintf("http://mixed.test:%d/m", port)); !strings.HasSuffix(got, "hello /m") {
		t.Errorf("mixed: %q", got)
	}
	mu.Lock()
	if want := fmt.Sprintf("[127.0.0.1:%d]", port); fmt.Sprint(dialed) != want {
		t.Errorf("dialled %v, want %s", dialed, want)
	}
	mu.Unlock()
	// The same for a CONNECT.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT mixed.test:%d HTTP/1.1\r\n\r\nGET /t HTTP/1.1\r\nHost: mixed.test\r\n\r\n", port)
	br := bufio.NewReader(c)
	if head := readResponseHead(t, br); head != http1.ConnectEstablished {
		t.Fatalf("CONNECT answered %q", head)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "hello /t" {
		t.Errorf("through the tunnel: %q", b)
	}
}

// TestKeptAliveUnderItsPolicy: a pooled upstream connection serves later
// requests, from any client connection, only while the address policy it
// was checked under is in force; after a change the next request dials
// (and is checked) anew.
func TestKeptAliveUnderItsPolicy(t *testing.T) {
	up := newUpstream(t, nil)
	port := up.Listener.Addr().(*net.TCPAddr).Port
	var cur atomic.Pointer[policy.AddressPolicy]
	cur.Store(exempt(t, fmt.Sprintf("127.0.0.1:%d", port))())
	var dials atomic.Int32
	addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) {
		s.Dialer.Resolve = fakeResolve(map[string][]string{"app.test": {"127.0.0.1"}})
		s.Dialer.Policy = cur.Load
		s.Dialer.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		}
	})
	get := func(path string) string {
		return rawExchange(t, addr, []byte(fmt.Sprintf("GET http://app.test:%d%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port, path)))
	}
	for i := range 3 { // three client connections, one upstream connection
		if got := get("/a"); !strings.HasSuffix(got, "hello /a") {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials for three requests to one destination, want 1", n)
	}
	// New lists that still exempt the address: a new connection.
	cur.Store(exempt(t, fmt.Sprintf("127.0.0.1:%d", port))())
	if got := get("/b"); !strings.HasSuffix(got, "hello /b") {
		t.Fatalf("after the update: %q", got)
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d dials after the lists changed, want 2", n)
	}
	// Lists without the exemption: refused, although a connection is idle.
	cur.Store(&policy.AddressPolicy{})
	if got := get("/c"); !strings.Contains(got, "X-Proxy-Error: blocked-by-sandbox-runtime") {
		t.Errorf("after the exemption went: %q", got)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.uris) != 4 {
		t.Errorf("upstream saw %v", up.uris)
	}
}

func TestParentProxyConnect(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	seen := make(chan string, 4)
	pl := connectParent(t, echo.Addr().String(), seen)
	pu, _ := url.Parse("http://corp:pw@" + pl.Addr().String())
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Token = testToken
		s.Dialer.Parent = &dial.ParentProxy{HTTPS: pu}
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT x.test:443 HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n", basicAuth("srt", testToken))
	if got := readN(t, c, len(http1.ConnectEstablished)); string(got) != http1.ConnectEstablished {
		t.Fatalf("got %q", got)
	}
	io.WriteString(c, "through the parent")
	if got := readN(t, c, 18); string(got) != "through the parent" {
		t.Errorf("echo %q", got)
	}
	if got := <-seen; got != "CONNECT x.test:443 Basic Y29ycDpwdw==" {
		t.Errorf("parent saw %q", got)
	}
	// SOCKS5 goes through the parent's CONNECT too.
	sc, reply := socksConnect(t, addr, "srt", testToken, socksDomain("y.test", 22))
	defer sc.Close()
	if reply[3] != 0 {
		t.Fatalf("SOCKS reply % x", reply)
	}
	if got := <-seen; got != "CONNECT y.test:22 Basic Y29ycDpwdw==" {
		t.Errorf("parent saw %q", got)
	}
}
