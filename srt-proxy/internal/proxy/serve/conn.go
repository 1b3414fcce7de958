// Package serve is what every connection handler of srt-proxy shares: the
// accepted client connection (Conn), the decision record written once when
// a connection or request ends (Record), the byte tunnel that splices an
// allowed tunnel (Tunnel), and the proxy credential check (TokenEqual).
package serve

import (
	"net"
	"sync"
	"sync/atomic"
)

// Conn is one accepted client connection.
type Conn struct {
	Raw  net.Conn    // the client's socket (in a terminated tunnel: its TLS)
	Idle atomic.Bool // waiting for a request on a kept-alive connection

	mu       sync.Mutex
	upstream net.Conn // the tunnel's upstream, closed with the client
	closed   bool
}

// SetUpstream makes u (nil: none) the upstream closed with the
// connection; false when the connection is closed already (u is then the
// caller's to close).
func (c *Conn) SetUpstream(u net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.upstream = u
	return true
}

// Close closes the connection and its upstream.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.Raw.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
}
