package proxy

import (
	"io"
	"net"
	"sync"
	"time"
)

// tunnel copies bytes both ways between client and upstream until both
// directions end, and returns how many went up (client→upstream) and down.
//
// With both ends *net.TCPConn, io.Copy moves the bytes with splice(2) and
// they never enter user space; so nothing may wrap either connection here.
// A direction that ends cleanly (EOF) half-closes its destination and the
// other direction carries on; once the upstream has finished, the client
// gets halfCloseTimeout to finish too. An error on either side closes both.
func tunnel(client, upstream net.Conn) (up, down int64) {
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
		if err != nil || closeWrite(upstream) != nil {
			closeBoth()
		}
	}()
	down, err := io.Copy(client, upstream)
	if err != nil || closeWrite(client) != nil {
		closeBoth()
	} else {
		client.SetReadDeadline(time.Now().Add(halfCloseTimeout))
	}
	<-done
	closeBoth()
	return up, down
}

// closeWrite half-closes c (FIN, or a TLS close_notify), or closes it when
// it cannot half-close.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// lingerClose half-closes c after a final answer and reads (and discards)
// what the client still sends for a moment before closing, so that the
// answer is not lost to a reset caused by unread input.
func lingerClose(c net.Conn) {
	if closeWrite(c) == nil {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.CopyN(io.Discard, c, 256<<10)
	}
	c.Close()
}
