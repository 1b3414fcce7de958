// Package relay carries the connections a sandbox makes to one of its
// proxy ports to an external proxy on this host's loopback — srt's
// network.httpProxyPort and network.socksProxyPort ("bring your own
// proxy") — byte for byte. Nothing on that path is decided here: the
// external proxy sees the client's own bytes and does all the filtering.
//
//	sandbox                         srt-proxy (host)                    host
//	curl ──▶ 127.0.0.1:3128 ──accept──▶ Relay ──dial localhost:PORT──▶ external proxy
//	     ◀───────────────────── splice(2), both ways ─────────────────▶
//
// The external proxy is dialled at the addresses "localhost" has on this
// host (Targets): its loopback addresses, in the order the host's resolver
// gives them (/etc/hosts first), and 127.0.0.1 then ::1 when it gives
// none. Only loopback addresses are ever dialled. When none accepts, the
// sandbox's connection is closed without a byte (a relay cannot answer in
// the client's protocol), and Warn says so once.
package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultMaxConns bounds the connections one Relay carries at once; past
// it, new connections wait in the listener's backlog until one ends.
const DefaultMaxConns = 1024

// dialTimeout bounds one dial of the external proxy (loopback: it accepts
// or refuses at once, unless its backlog is full).
const dialTimeout = 5 * time.Second

// lookupTimeout bounds the lookup of "localhost".
const lookupTimeout = 2 * time.Second

// Relay relays the connections of any number of listeners to one external
// proxy. The zero value is not usable: Port is required.
type Relay struct {
	// Port is the external proxy's port on this host's localhost.
	Port int
	// Setting is the settings key that names Port ("httpProxyPort"),
	// for the warning.
	Setting string
	// Lookup resolves a host name (nil: the Go resolver, which reads
	// /etc/hosts first).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial opens a TCP connection (nil: a net.Dialer).
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Warn receives the one-time line saying that the external proxy
	// could not be reached (nil: nothing is said).
	Warn func(line string)
	// MaxConns bounds the connections carried at once (0: DefaultMaxConns).
	MaxConns int
	// Logger gets one debug line per connection.
	Logger zerolog.Logger

	once   sync.Once
	slots  chan struct{}
	warned atomic.Bool
	active atomic.Int64

	// The last lookup, kept for targetsTTL: a host without a localhost
	// entry in /etc/hosts would otherwise ask DNS for every connection.
	mu        sync.Mutex
	targets   []netip.AddrPort
	targetsAt time.Time
}

// targetsTTL is how long a lookup of localhost is used (as long as Go
// keeps /etc/hosts).
const targetsTTL = 5 * time.Second

func (r *Relay) init() {
	r.once.Do(func() {
		n := r.MaxConns
		if n <= 0 {
			n = DefaultMaxConns
		}
		r.slots = make(chan struct{}, n)
	})
}

// Active is the number of connections being carried now.
func (r *Relay) Active() int { return int(r.active.Load()) }

// Serve accepts on ln and relays every connection until ln is closed;
// then it returns nil (connections in flight carry on until either end
// closes). Other accept errors are retried after a pause, as a full
// descriptor table is.
func (r *Relay) Serve(ln net.Listener) error {
	r.init()
	pause := 5 * time.Millisecond
	for {
		r.slots <- struct{}{} // wait for a free slot before taking a connection
		c, err := ln.Accept()
		if err != nil {
			<-r.slots
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			r.Logger.Debug().Err(err).Str("setting", r.Setting).Msg("relay: accept failed; retrying")
			time.Sleep(pause)
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 5 * time.Millisecond
		r.active.Add(1)
		go func() {
			defer func() {
				r.active.Add(-1)
				<-r.slots
			}()
			r.carry(c)
		}()
	}
}

// carry relays one connection and closes both ends when it is over.
func (r *Relay) carry(c net.Conn) {
	defer c.Close()
	start := time.Now()
	up, addr, err := r.dialUpstream()
	if err != nil {
		r.Logger.Debug().Str("setting", r.Setting).Int("port", r.Port).Err(err).Msg("relay: the external proxy cannot be reached; connection closed")
		if r.Warn != nil && r.warned.CompareAndSwap(false, true) {
			r.Warn(fmt.Sprintf("warning: network.%s is %d, but nothing on this host accepts connections on localhost:%d (%v); the sandbox's connections to that proxy are closed", r.Setting, r.Port, r.Port, err))
		}
		refuse(c)
		return
	}
	defer up.Close()
	in, out := join(c, up)
	r.Logger.Debug().Str("setting", r.Setting).Str("resolved", addr.String()).Int64("bytes_in", in).Int64("bytes_out", out).
		Dur("duration", time.Since(start)).Msg("relay: connection done")
}

// refuseDrain bounds what refuse reads, and for how long.
const (
	refuseDrainBytes = 64 << 10
	refuseDrainTime  = 2 * time.Second
)

// refuse ends a connection no proxy will answer the same way every time:
// end of stream first (the client sees an empty answer: curl's "Empty
// reply from server"), then what the client sent is read and dropped
// until it closes too. Closing with its request unread would reset the
// connection instead, or not, depending on timing.
func refuse(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		c.SetReadDeadline(time.Now().Add(refuseDrainTime))
		io.Copy(io.Discard, io.LimitReader(c, refuseDrainBytes))
	}
}

// Targets are the addresses "localhost" has on this host, loopback only:
// as the resolver gives them, else 127.0.0.1 and ::1.
func (r *Relay) Targets(ctx context.Context) []netip.AddrPort {
	lookup := r.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, _ := lookup(ctx, "localhost")
	var out []netip.AddrPort
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsLoopback() && !seen[a] {
			seen[a] = true
			out = append(out, netip.AddrPortFrom(a, uint16(r.Port)))
		}
	}
	if len(out) == 0 {
		out = []netip.AddrPort{
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(r.Port)),
			netip.AddrPortFrom(netip.IPv6Loopback(), uint16(r.Port)),
		}
	}
	return out
}

// cachedTargets is Targets, looked up at most once per targetsTTL.
func (r *Relay) cachedTargets() []netip.AddrPort {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.targets == nil || time.Since(r.targetsAt) > targetsTTL {
		r.targets, r.targetsAt = r.Targets(context.Background()), time.Now()
	}
	return r.targets
}

// dialUpstream dials the targets in turn; the first that accepts wins.
func (r *Relay) dialUpstream() (net.Conn, netip.AddrPort, error) {
	dial := r.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		dial = func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", ap.String())
		}
	}
	var errs []error
	for _, ap := range r.cachedTargets() {
		if !ap.Addr().IsLoopback() {
			continue // never: Targets keeps loopback only
		}
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		c, err := dial(ctx, ap)
		cancel()
		if err == nil {
			return c, ap, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, netip.AddrPort{}, errors.New("no loopback address for localhost")
	}
	return nil, netip.AddrPort{}, errors.Join(errs...)
}

// join copies both ways until both directions are done. A direction that
// ends cleanly half-closes its destination, so the other goes on; one that
// fails ends the whole connection. Between two TCP connections the copy is
// splice(2): the bytes never enter this process.
func join(a, b net.Conn) (aToB, bToA int64) {
	done := make(chan int64, 1)
	go func() { done <- pipe(b, a) }()
	bToA = pipe(a, b)
	aToB = <-done
	return aToB, bToA
}

// pipe copies src to dst and then half-closes dst; on an error it closes
// both, so that the other direction ends too.
func pipe(dst, src net.Conn) int64 {
	var n int64
	var err error
	if rf, ok := dst.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src) // *net.TCPConn from *net.TCPConn: splice
	} else {
		n, err = io.Copy(dst, src)
	}
	if err != nil {
		dst.Close()
		src.Close()
		return n
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return n
		}
	}
	dst.Close()
	return n
}
