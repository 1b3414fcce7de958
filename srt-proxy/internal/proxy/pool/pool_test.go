package pool

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/policy"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
)

// pooledPipe is an Conn over one end of a pipe; closed reports whether
// the pool closed it.
func pooledPipe(t *testing.T, key Key, checked *policy.AddressPolicy) (u *Conn, closed func() bool) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	u = NewConn(a, a, "pipe")
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
	p := &Pool{dialer: &dial.Dialer{Policy: func() *policy.AddressPolicy { return cur }}}
	key := Key{"http", "a.test", 80}

	var closed []func() bool
	var conns []*Conn
	for range maxIdlePerKey + 1 {
		u, c := pooledPipe(t, key, cur)
		p.Put(u)
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
		u, _ := pooledPipe(t, Key{"http", "b.test", 1000 + i}, cur)
		p.Put(u)
	}
	u, c := pooledPipe(t, Key{"http", "c.test", 80}, cur)
	p.Put(u)
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
	u, c = pooledPipe(t, Key{"http", "d.test", 80}, old)
	p.Put(u)
	if !c() {
		t.Error("a connection checked under replaced lists was put back")
	}

	// Idle too long.
	u, c = pooledPipe(t, Key{"http", "e.test", 80}, cur)
	p.mu.Lock()
	n := p.n
	p.mu.Unlock()
	p.Put(u)
	p.expire(u)
	if !c() || p.n != n || p.take(u.key) != nil {
		t.Error("an expired idle connection stayed in the pool")
	}

	// Closing.
	p.Close()
	if p.n != 0 {
		t.Errorf("%d idle after close", p.n)
	}
	u, c = pooledPipe(t, Key{"http", "f.test", 80}, cur)
	p.Put(u)
	if !c() {
		t.Error("a connection put back after close was kept")
	}
}
