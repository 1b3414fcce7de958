// Package accept is the accept loop of the listeners srt-proxy serves
// besides the proxy's own (internal/capture, internal/dnsserver).
package accept

import (
	"errors"
	"net"
	"time"
)

// Loop accepts connections on ln and runs serve for each on a goroutine of
// its own, until ln is closed (then it returns nil). Other accept errors
// (out of descriptors and the like) are waited out with a growing pause,
// at most a second, as net/http does.
func Loop(ln net.Listener, serve func(net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go serve(c)
	}
}
