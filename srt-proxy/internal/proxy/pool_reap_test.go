package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleUpstreamReaped: a kept upstream connection that the upstream
// closes while it waits in the pool is closed by the proxy at once, not
// left in CLOSE-WAIT until the next request to that destination (issue
// 14); one the upstream keeps open is used again.
func TestIdleUpstreamReaped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	var conns atomic.Int32
	serveEach(t, l, func(c net.Conn) {
		conns.Add(1)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			r, err := http.ReadRequest(br)
			if err != nil {
				ended <- err
				return
			}
			answerMethodPath(c, r)
			if r.URL.Path == "/last" {
				// The upstream's idle close: its FIN, with its read side
				// kept to see what the proxy does about it.
				c.(*net.TCPConn).CloseWrite()
			}
		}
	})
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	send := proxyClient(t, addr)
	up := "http://" + l.Addr().String()
	for _, path := range []string{"/one", "/two", "/last"} {
		if got := send("GET", up+path); got != "200 GET "+path {
			t.Fatalf("%s: %q", path, got)
		}
		time.Sleep(50 * time.Millisecond) // idle in the pool, watched
	}
	select {
	case err := <-ended:
		if err != io.EOF {
			t.Errorf("the upstream read %v, want the proxy's close (EOF) after its requests", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the proxy keeps a pooled connection the upstream closed (CLOSE-WAIT)")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d upstream connections, want the watched one used for every request", n)
	}
}
