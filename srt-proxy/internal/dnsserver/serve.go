package dnsserver

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/google/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt-proxy/internal/accept"
)

// Limits of the TCP side (RFC 7766): a connection may carry several
// queries, answered in order; it is closed after idleTimeout without a
// query, when a query takes longer than readTimeout to arrive whole, or
// when an answer cannot be written within writeTimeout. A query longer
// than maxQuery is no query this server answers: the connection is closed.
const (
	idleTimeout  = 10 * time.Second
	readTimeout  = 5 * time.Second
	writeTimeout = 5 * time.Second
	maxQuery     = 4096
	// maxConns bounds the TCP connections served at once per listener;
	// one more is closed at once.
	maxConns = 64
)

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ServeUDP answers the queries that arrive on pc until it is closed. Other
// read errors are waited out with a growing pause (at most a second), so
// that the sandbox's name server does not stop on one.
func (a *Answerer) ServeUDP(pc *net.UDPConn) error {
	buf := make([]byte, maxQuery)
	oob := make([]byte, 64)
	var p accept.Pause
	for {
		n, _, flags, from, err := pc.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if p.After(err) {
				return nil
			}
			continue
		}
		p.Reset()
		var reply []byte
		switch {
		case flags&unix.MSG_TRUNC == 0:
			reply = a.Answer(buf[:n], true)
		case buf[2]&0x80 == 0: // longer than any query answered here (n is 4096)
			reply = headerOnly(buf[:n], layers.DNSResponseCodeFormErr)
		}
		if reply != nil {
			pc.WriteToUDPAddrPort(reply, from)
		}
	}
}

// ServeTCP answers the queries on every connection accepted on ln until ln
// is closed; then it closes the connections still open.
func (a *Answerer) ServeTCP(ln net.Listener) error {
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	closed := false
	err := accept.Loop(ln, func(c net.Conn) {
		mu.Lock()
		if closed || len(conns) >= maxConns {
			mu.Unlock()
			c.Close()
			return
		}
		conns[c] = struct{}{}
		mu.Unlock()
		a.serveConn(c)
		mu.Lock()
		delete(conns, c)
		mu.Unlock()
		c.Close()
	})
	mu.Lock()
	closed = true
	for c := range conns {
		c.Close()
	}
	mu.Unlock()
	return err
}

// serveConn answers the queries of one TCP connection, each a two-byte
// length and the message.
func (a *Answerer) serveConn(c net.Conn) {
	var hdr [2]byte
	buf := make([]byte, maxQuery)
	for {
		c.SetReadDeadline(time.Now().Add(orDefault(a.idle, idleTimeout)))
		if _, err := io.ReadFull(c, hdr[:1]); err != nil {
			return
		}
		c.SetReadDeadline(time.Now().Add(readTimeout))
		if _, err := io.ReadFull(c, hdr[1:]); err != nil {
			return
		}
		n := lengthOf(hdr[:])
		if n > maxQuery {
			return
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return
		}
		reply := a.Answer(buf[:n], false)
		if reply == nil {
			continue
		}
		c.SetWriteDeadline(time.Now().Add(writeTimeout))
		out := make([]byte, 2+len(reply))
		out[0], out[1] = byte(len(reply)>>8), byte(len(reply))
		copy(out[2:], reply)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}
