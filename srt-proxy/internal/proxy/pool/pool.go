package pool

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
)

// The limits of the plain-HTTP connection pool.
const (
	maxIdlePerKey   = 64
	maxIdle         = 1024
	upstreamIdleFor = 90 * time.Second // an idle upstream connection is closed after this
)

// Key is the destination of a pooled connection.
type Key struct {
	Scheme, Host string
	Port         int
}

// Pool keeps the upstream connections of plain-HTTP requests alive
// between requests, for any client connection to reuse. Every new
// connection is opened by dial.Dialer.HTTP (the resolved-address check
// included), and a connection is reused only under the address policy it
// was checked under: once the lists change, the next request to that
// destination dials anew.
type Pool struct {
	dialer *dial.Dialer

	mu     sync.Mutex
	idle   map[Key][]*Conn // most recently used last
	n      int
	closed bool
}

// New is an empty pool whose connections d opens.
func New(d *dial.Dialer) *Pool { return &Pool{dialer: d} }

// policy is the address policy in force now (the dialer's, compared by
// identity: this package applies none).
func (p *Pool) policy() any {
	if p.dialer.Policy == nil {
		return nil
	}
	return p.dialer.Policy()
}

// Get returns a connection to key: an idle one that is still alive unless
// fresh is asked for, else a new one.
func (p *Pool) Get(ctx context.Context, key Key, fresh bool) (*Conn, error) {
	if !fresh {
		for u := p.take(key); u != nil; u = p.take(key) {
			if u.Alive() {
				return u, nil
			}
			u.Close()
		}
	}
	checked := p.policy() // before the dial: at worst, older than the one it applied
	var raw net.Conn
	wrap := func(c net.Conn) net.Conn { raw = c; return c }
	c, dialed, err := p.dialer.HTTP(ctx, key.Scheme, key.Host, key.Port, wrap)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		raw = c
		if tc, ok := c.(*tls.Conn); ok {
			raw = tc.NetConn() // an https:// parent: alive looks at its socket
		}
	}
	u := NewConn(c, raw, dialed.Addr)
	u.key, u.policy = key, checked
	if key.Scheme == "http" {
		// Requests go to the parent itself: absolute form, its
		// credentials. An https:// destination is reached through the
		// parent's CONNECT, and what goes inside its TLS is for the
		// origin alone.
		u.Parent = dialed.Parent
	}
	return u, nil
}

// take removes the most recently used idle connection to key from the
// pool, its watch ended; nil when there is none checked under the policy
// in force.
func (p *Pool) take(key Key) *Conn {
	u := p.pop(key)
	if u != nil {
		u.unwatch()
	}
	return u
}

func (p *Pool) pop(key Key) *Conn {
	cur := p.policy()
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[key]
	for len(list) > 0 {
		u := list[len(list)-1]
		list[len(list)-1] = nil
		list = list[:len(list)-1]
		p.n--
		u.expiry.Stop()
		if u.policy == cur {
			p.idle[key] = list
			return u
		}
		u.Close() // checked under lists no longer in force
	}
	delete(p.idle, key)
	return nil
}

// Put returns a connection that can carry another request to the pool, or
// closes it when the pool is full or closed or the lists changed since it
// was checked.
func (p *Pool) Put(u *Conn) {
	cur := p.policy()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || u.policy != cur || p.n >= maxIdle || len(p.idle[u.key]) >= maxIdlePerKey {
		u.Close()
		return
	}
	if p.idle == nil {
		p.idle = make(map[Key][]*Conn)
	}
	p.idle[u.key] = append(p.idle[u.key], u)
	p.n++
	p.watch(u)
	if u.expiry == nil {
		u.expiry = time.AfterFunc(upstreamIdleFor, func() { p.expire(u) })
	} else {
		u.expiry.Reset(upstreamIdleFor)
	}
}

// watch closes u, idle in the pool, as soon as its socket has anything
// to read: the upstream's FIN (its idle close, which would otherwise keep
// the socket in CLOSE-WAIT until the next request to that destination or
// the idle timer) or bytes nobody asked for; either way alive would refuse
// it. It reads nothing: a goroutine waits on the poller for readability,
// peeking, until then, or until unwatch (a read deadline) or a close ends
// the wait. A connection it cannot look into is left to the idle timer.
func (p *Pool) watch(u *Conn) {
	sc, ok := u.raw.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	done := make(chan struct{})
	u.watched = done
	go func() {
		defer close(done)
		var buf [1]byte
		err := rc.Read(func(fd uintptr) bool {
			_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK // false: wait for readability
		})
		if err == nil {
			p.expire(u) // a no-op if it was taken meanwhile: alive sees the same
		}
	}()
}

// unwatch ends u's watch and waits for it, leaving no read deadline.
func (u *Conn) unwatch() {
	if u.watched == nil {
		return
	}
	u.raw.SetReadDeadline(time.Unix(1, 0)) // wakes the wait
	<-u.watched
	u.raw.SetReadDeadline(time.Time{})
	u.watched = nil
}

// expire closes u if it is still idle in the pool.
func (p *Pool) expire(u *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[u.key]
	for i, v := range list {
		if v == u {
			p.idle[u.key] = append(list[:i], list[i+1:]...)
			if len(p.idle[u.key]) == 0 {
				delete(p.idle, u.key)
			}
			p.n--
			u.Close()
			return
		}
	}
}

// Close closes the idle connections, and those put back from now on.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, list := range p.idle {
		for _, u := range list {
			u.expiry.Stop()
			u.Close()
		}
	}
	p.idle, p.n = nil, 0
}
