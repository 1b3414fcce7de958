package proxy

import (
	"bufio"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/proxyonly"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// serveHTTP serves requests on a connection until it closes or one of
// them ends it (a CONNECT, a refusal that closes, a client asking for
// close).
func (s *Server) serveHTTP(c *serve.Conn, br *bufio.Reader) {
	h := &forward.Conn{Env: s.env, Client: c, BR: br, BW: bufio.NewWriterSize(c.Raw, 4096)}
	defer func() {
		if h.BR != nil { // not a tunnel: the last answer must not be lost to a reset
			serve.LingerClose(c.Raw)
		}
	}()
	for first := true; ; first = false {
		if !first {
			// Wait for the next request; an idle connection is closed at
			// shutdown.
			c.Idle.Store(true)
			if s.isClosing() {
				return
			}
			c.Raw.SetReadDeadline(time.Now().Add(idleTimeout))
			_, err := h.BR.Peek(1)
			c.Idle.Store(false)
			if err != nil {
				return
			}
		}
		c.Raw.SetReadDeadline(time.Now().Add(forward.HeadTimeout))
		if !s.serveOne(h) {
			return
		}
	}
}

// serveOne reads and serves one request; it reports whether the
// connection may carry another.
func (s *Server) serveOne(h *forward.Conn) bool {
	h.BeginRequest()
	rec := serve.NewRecord("http")
	head := h.NextHead(rec)
	if head == nil {
		return false
	}
	h.Client.Raw.SetReadDeadline(time.Time{})
	if s.ProxyOnly != nil {
		return proxyonly.Serve(s.ProxyOnly, s.TLS, h, head, rec)
	}
	if head.Method == "CONNECT" {
		rec.Kind = ask.KindConnect.String()
		s.serveConnect(h, head, rec)
		return false
	}
	return s.serveRequest(h, head, rec)
}
