package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
)

// pooledPipe is an upConn over one end of a pipe; closed reports whether
// the pool closed it.
func pooledPipe(t *testing.T, key upKey, checked *policy.AddressPolicy) (u *upConn, closed func() bool) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	u = newUpConn(a, a, "pipe")
	u.key, u.policy = key, checked
	return u, func() bool {
		b.SetReadDeadline(time.Now().Add(time.Second))
		_, err := b.Read(make([]byte, 1))
		return err == io.EOF
	}
}

// TestPoolLimits: the pool keeps at most maxIdlePerKey idle connections per
// destination and maxIdle in all, closing what it cannot keep; it hands
// back the most recently used first; a connection checked under other
// lists is closed, never handed out; an idle one is closed when its time
// is up; closing the pool closes what it holds and what comes back later.
func TestPoolLimits(t *testing.T) {
	cur := &policy.AddressPolicy{}
	p := &upstreamPool{dialer: &dial.Dialer{Policy: func() *policy.AddressPolicy { return cur }}}
	key := upKey{"http", "a.test", 80}

	var closed []func() bool
	var conns []*upConn
	for range maxIdlePerKey + 1 {
		u, c := pooledPipe(t, key, cur)
		p.put(u)
		conns, closed = append(conns, u), append(closed, c)
	}
	if !closed[maxIdlePerKey]() || p.n != maxIdlePerKey {
		t.Fatalf("one destination: %d idle, the one past %d closed: %v", p.n, maxIdlePerKey, closed[maxIdlePerKey]())
	}
	if got := p.take(key); got != conns[maxIdlePerKey-1] {
		t.Error("take did not return the most recently used connection")
	}

	// Across destinations, up to maxIdle in all.
	for i := 0; p.n < maxIdle; i++ {
		u, _ := pooledPipe(t, upKey{"http", "b.test", 1000 + i}, cur)
		p.put(u)
	}
	u, c := pooledPipe(t, upKey{"http", "c.test", 80}, cur)
	p.put(u)
	if !c() || p.n != maxIdle {
		t.Errorf("full pool: %d idle, the next one closed: %v", p.n, c())
	}

	// Lists changed: what was checked under the old ones is closed.
	old := cur
	cur = &policy.AddressPolicy{}
	if got := p.take(key); got != nil {
		t.Error("a connection checked under replaced lists was handed out")
	}
	if !closed[0]() || !closed[maxIdlePerKey-2]() {
		t.Error("connections checked under replaced lists were kept open")
	}
	u, c = pooledPipe(t, upKey{"http", "d.test", 80}, old)
	p.put(u)
	if !c() {
		t.Error("a connection checked under replaced lists was put back")
	}

	// Idle too long.
	u, c = pooledPipe(t, upKey{"http", "e.test", 80}, cur)
	p.mu.Lock()
	n := p.n
	p.mu.Unlock()
	p.put(u)
	p.expire(u)
	if !c() || p.n != n || p.take(u.key) != nil {
		t.Error("an expired idle connection stayed in the pool")
	}

	// Closing.
	p.close()
	if p.n != 0 {
		t.Errorf("%d idle after close", p.n)
	}
	u, c = pooledPipe(t, upKey{"http", "f.test", 80}, cur)
	p.put(u)
	if !c() {
		t.Error("a connection put back after close was kept")
	}
}

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
