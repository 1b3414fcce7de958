//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// exposure is a command's network.exposeLoopbackPorts: srt listens at each
// port on the host's loopback and, for every connection there, has the
// init stage connect to the same port on the sandbox's loopback and send
// the socket back over the channel; srt copies the bytes between the two.
// Nothing else inside is reachable from the host.
type exposure struct {
	mu        sync.Mutex
	listeners []net.Listener // under mu once the command runs (allowLocalBinding adds)
	waiting   map[uint16][]chan connectResult
	ended     bool // the channel's reader has stopped: no answer will come
	closed    bool // closeExposed ran: the listeners are gone
	dynamic   int  // ports allowLocalBinding exposed
	conns     map[net.Conn]bool
	wg        sync.WaitGroup
}

type connectResult struct {
	f   *os.File
	err error
}

// exposeTimeout bounds the wait for the init stage's answer (a variable
// for the tests).
var exposeTimeout = 10 * time.Second

// maxDynamic bounds the ports allowLocalBinding exposes for one command.
const maxDynamic = 256

// exposeListening exposes port, where a server of the sandbox now listens
// (network.allowLocalBinding): a port the host uses already is said once
// and left alone.
func (c *Cmd) exposeListening(port uint16) {
	e := &c.expose
	e.mu.Lock()
	if e.ended || e.dynamic >= maxDynamic {
		e.mu.Unlock()
		return
	}
	e.dynamic++
	before := len(e.listeners)
	e.mu.Unlock()
	if err := c.listenPort(int(port)); err != nil {
		fmt.Fprintf(c.m.opts.Warnings, "srt: warning: network.allowLocalBinding: the command listens on port %d, which this host's loopback cannot give it (%v); it is not reachable from the host\n", port, errors.Unwrap(err))
		return
	}
	c.m.debugf("allowLocalBinding: port %d of the sandbox is reachable at the host's loopback", port)
	e.mu.Lock()
	if e.ended {
		e.mu.Unlock()
		return
	}
	added := e.listeners[before:]
	e.mu.Unlock()
	for _, l := range added {
		c.serveListener(l)
	}
}

// listenExposed reserves the host's loopback ports of
// network.exposeLoopbackPorts: a port in use is an error naming it.
func (c *Cmd) listenExposed(ports []int) error {
	for _, p := range ports {
		if err := c.listenPort(p); err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("sandbox: network.exposeLoopbackPorts: port %d is in use on this host's loopback (%s): stop what listens there, or expose another port", p, err.(*listenError).addr)
			}
			return fmt.Errorf("sandbox: network.exposeLoopbackPorts: %w", err)
		}
	}
	return nil
}

// listenError is a port the host's loopback cannot give.
type listenError struct {
	addr netip.AddrPort
	err  error
}

func (e *listenError) Error() string {
	return "cannot listen on " + e.addr.String() + ": " + e.err.Error()
}
func (e *listenError) Unwrap() error { return e.err }

// listenPort listens at port on the host's loopback: 127.0.0.1, and ::1
// where the host has it. Either failing leaves neither.
func (c *Cmd) listenPort(port int) error {
	var got []net.Listener
	for _, addr := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()} {
		ap := netip.AddrPortFrom(addr, uint16(port))
		l, err := net.Listen("tcp", ap.String())
		if err != nil {
			if addr.Is6() && (errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)) {
				continue // the host has no IPv6 loopback
			}
			for _, l := range got {
				l.Close()
			}
			var errno syscall.Errno
			if errors.As(err, &errno) {
				err = errno
			}
			return &listenError{ap, err}
		}
		got = append(got, l)
	}
	c.expose.mu.Lock()
	defer c.expose.mu.Unlock()
	if c.expose.closed {
		// Released meanwhile: nothing would close them.
		for _, l := range got {
			l.Close()
		}
		return &listenError{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), net.ErrClosed}
	}
	c.expose.listeners = append(c.expose.listeners, got...)
	return nil
}

// serveExposed accepts on the exposed ports until they close.
func (c *Cmd) serveExposed() {
	c.expose.mu.Lock()
	ls := append([]net.Listener(nil), c.expose.listeners...)
	c.expose.mu.Unlock()
	for _, l := range ls {
		c.serveListener(l)
	}
}

// serveListener accepts on l until it closes, relaying each connection to
// the same port inside.
func (c *Cmd) serveListener(l net.Listener) {
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	c.expose.wg.Add(1)
	go func() {
		defer c.expose.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if !c.expose.track(conn) {
				conn.Close()
				return
			}
			c.expose.wg.Add(1)
			go func() {
				defer c.expose.wg.Done()
				c.relayExposed(conn, port)
			}()
		}
	}()
}

// relayExposed connects a host connection to the port inside and copies
// both ways until each side has finished.
func (c *Cmd) relayExposed(host net.Conn, port uint16) {
	defer c.expose.untrack(host)
	inside, err := c.connectInside(port)
	if err != nil {
		c.m.debugf("exposeLoopbackPorts: port %d: %v", port, err)
		host.Close()
		return
	}
	if !c.expose.track(inside) {
		inside.Close()
		host.Close()
		return
	}
	defer c.expose.untrack(inside)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(inside, host)
	go pipe(host, inside)
	<-done
	<-done
	host.Close()
	inside.Close()
}

// connectInside asks the init stage for a connection to port on the
// sandbox's loopback.
func (c *Cmd) connectInside(port uint16) (net.Conn, error) {
	ch := make(chan connectResult, 1)
	e := &c.expose
	e.mu.Lock()
	if e.ended {
		e.mu.Unlock()
		return nil, errors.New("the sandbox is gone")
	}
	if e.waiting == nil {
		e.waiting = map[uint16][]chan connectResult{}
	}
	e.waiting[port] = append(e.waiting[port], ch)
	e.mu.Unlock()
	msg := []byte{initstage.CtlConnect, 0, 0}
	binary.BigEndian.PutUint16(msg[1:], port)
	if _, err := c.channel.Write(msg); err != nil {
		return nil, err // the reader's end fails the wait's entry
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		defer r.f.Close()
		return net.FileConn(r.f)
	case <-time.After(exposeTimeout):
		c.abandonConnect(port, ch)
		return nil, errors.New("the sandbox did not answer in time")
	}
}

// abandonConnect takes a request that timed out off port's queue, so that
// a late answer goes to the next request (a connection to the same port
// serves it as well) or is closed, instead of staying in ch with nobody
// to close it. When connected has already taken ch, its answer is on the
// way (ch is buffered, the send does not wait): it is received and closed.
func (c *Cmd) abandonConnect(port uint16, ch chan connectResult) {
	e := &c.expose
	e.mu.Lock()
	q := e.waiting[port]
	for i, w := range q {
		if w == ch {
			e.waiting[port] = append(q[:i:i], q[i+1:]...)
			e.mu.Unlock()
			return
		}
	}
	e.mu.Unlock()
	if r := <-ch; r.f != nil {
		r.f.Close()
	}
}

// connected hands the init stage's answer for port to the oldest request
// waiting on it.
func (c *Cmd) connected(port uint16, f *os.File, errno unix.Errno) {
	e := &c.expose
	e.mu.Lock()
	var ch chan connectResult
	if q := e.waiting[port]; len(q) > 0 {
		ch, e.waiting[port] = q[0], q[1:]
	}
	e.mu.Unlock()
	r := connectResult{f: f}
	if errno != 0 {
		r.err = fmt.Errorf("connect to port %d inside the sandbox: %w", port, errno)
	}
	if ch == nil {
		if f != nil {
			f.Close()
		}
		return
	}
	select {
	case ch <- r:
	default:
		if f != nil {
			f.Close()
		}
	}
}

// failConnects answers every waiting request: the channel's reader stopped.
func (c *Cmd) failConnects() {
	e := &c.expose
	e.mu.Lock()
	e.ended = true
	waiting := e.waiting
	e.waiting = nil
	e.mu.Unlock()
	for _, q := range waiting {
		for _, ch := range q {
			select {
			case ch <- connectResult{err: errors.New("the sandbox is gone")}:
			default:
			}
		}
	}
}

// closeExposed closes the listeners and every relayed connection, and
// waits for their goroutines.
func (c *Cmd) closeExposed() {
	e := &c.expose
	e.mu.Lock()
	for _, l := range e.listeners {
		l.Close()
	}
	e.ended, e.closed = true, true
	for conn := range e.conns {
		conn.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// track records a relayed connection, so closeExposed ends it; false once
// the exposure is closed.
func (e *exposure) track(conn net.Conn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return false
	}
	if e.conns == nil {
		e.conns = map[net.Conn]bool{}
	}
	e.conns[conn] = true
	return true
}

func (e *exposure) untrack(conn net.Conn) {
	e.mu.Lock()
	delete(e.conns, conn)
	e.mu.Unlock()
}

// exposeConflicts refuses an exposed port that a loopback entry of the
// allowed domains leads the other way (to the host's service).
func exposeConflicts(ports []int, loop []netip.AddrPort) error {
	for _, p := range ports {
		for _, ap := range loop {
			if int(ap.Port()) == p {
				return fmt.Errorf("sandbox: network.exposeLoopbackPorts: port %d is also a loopback entry of network.allowedDomains (%s), which leads that port inside the sandbox to the host's own service; a port leads one way: remove it from one list", p, ap)
			}
		}
	}
	return nil
}
