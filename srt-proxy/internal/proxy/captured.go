package proxy

import (
	"net"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/captured"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// ServeCaptured serves one captured connection (package captured) until
// it ends, as one of the server's connections: tracked, closed at
// shutdown, counted by the Observer. It writes the connection's record,
// and closes c when it returns.
func (s *Server) ServeCaptured(c net.Conn, d captured.Destination) {
	s.init()
	cc := &serve.Conn{Raw: c}
	if !s.track(cc) {
		c.Close()
		return
	}
	defer s.untrack(cc)
	if s.Observer != nil {
		s.Observer.ConnOpened()
		defer s.Observer.ConnClosed()
	}
	captured.Serve(s.env, s.TLS, cc, d)
}
