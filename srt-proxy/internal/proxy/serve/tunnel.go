package serve

import (
	"bufio"
	"io"
	"net"
	"sync"
	"time"
)

// halfCloseTimeout bounds the client's silence after the upstream
// finished a tunnel.
const halfCloseTimeout = 30 * time.Second

// Tunnel copies bytes both ways between client and upstream until both
// directions end, and returns how many went up (client→upstream) and down.
//
// With both ends *net.TCPConn, io.Copy moves the bytes with splice(2) and
// they never enter user space; so nothing may wrap either connection here.
// A direction that ends cleanly (EOF) half-closes its destination and the
// other direction carries on; once the upstream has finished, the client
// gets halfCloseTimeout to finish too. An error on either side closes both.
func Tunnel(client, upstream net.Conn) (up, down int64) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			upstream.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		up, err = io.Copy(upstream, client)
		if err != nil || CloseWrite(upstream) != nil {
			closeBoth()
		}
	}()
	down, err := io.Copy(client, upstream)
	if err != nil || CloseWrite(client) != nil {
		closeBoth()
	} else {
		client.SetReadDeadline(time.Now().Add(halfCloseTimeout))
	}
	<-done
	closeBoth()
	return up, down
}

// CloseWrite half-closes c (FIN, or a TLS close_notify), or closes it when
// it cannot half-close.
func CloseWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// LingerClose half-closes c after a final answer and reads (and discards)
// what the client still sends for a moment before closing, so that the
// answer is not lost to a reset caused by unread input.
func LingerClose(c net.Conn) {
	if CloseWrite(c) == nil {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.CopyN(io.Discard, c, 256<<10)
	}
	c.Close()
}

// TakeBuffered returns a copy of the bytes br holds that the client sent
// after its request (the start of the tunnel's stream); nil for a nil br.
func TakeBuffered(br *bufio.Reader) []byte {
	if br == nil {
		return nil
	}
	n := br.Buffered()
	if n == 0 {
		return nil
	}
	b, _ := br.Peek(n)
	return append([]byte(nil), b...)
}
