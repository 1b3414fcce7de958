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
	var p Pause
	for {
		c, err := ln.Accept()
		if err != nil {
			if p.After(err) {
				return nil
			}
			continue
		}
		p.Reset()
		go serve(c)
	}
}

// Pause waits out the errors of a socket that is not closed, as Loop does
// with accept's: a growing pause, from 5 ms to at most a second. Its zero
// value is ready.
type Pause struct{ d time.Duration }

// After reports whether err is the socket's end (net.ErrClosed): the
// caller stops. Otherwise it pauses, longer each time since the last
// Reset, and reports false.
func (p *Pause) After(err error) (closed bool) {
	if errors.Is(err, net.ErrClosed) {
		return true
	}
	p.d = min(max(2*p.d, 5*time.Millisecond), time.Second)
	time.Sleep(p.d)
	return false
}

// Reset starts the pauses again from the shortest, after a success.
func (p *Pause) Reset() { p.d = 0 }
