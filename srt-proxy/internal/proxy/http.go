package proxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"
)

// httpConn is a client connection speaking HTTP/1.x to the proxy.
type httpConn struct {
	s  *Server
	c  *conn
	br *bufio.Reader
	bw *bufio.Writer

	wmu          sync.Mutex // orders a 100 Continue against the response head
	responseSent bool
}

// serveHTTP serves requests on a connection until it closes or one of
// them ends it (a CONNECT, a refusal that closes, a client asking for
// close).
func (s *Server) serveHTTP(c *conn, br *bufio.Reader) {
	h := &httpConn{s: s, c: c, br: br, bw: bufio.NewWriterSize(c.raw, 4096)}
	defer func() {
		if h.br != nil { // not a tunnel: the last answer must not be lost to a reset
			lingerClose(c.raw)
		}
	}()
	for first := true; ; first = false {
		if !first {
			// Wait for the next request; an idle connection is closed at
			// shutdown.
			c.idle.Store(true)
			if s.isClosing() {
				return
			}
			c.raw.SetReadDeadline(time.Now().Add(idleTimeout))
			_, err := h.br.Peek(1)
			c.idle.Store(false)
			if err != nil {
				return
			}
		}
		c.raw.SetReadDeadline(time.Now().Add(headTimeout))
		if !h.serveOne() {
			return
		}
	}
}

// serveOne reads and serves one request; it reports whether the
// connection may carry another.
func (h *httpConn) serveOne() bool {
	h.wmu.Lock()
	h.responseSent = false
	h.wmu.Unlock()
	rec := newRecord("http")
	head, err := readHead(h.br, h.s.maxHead())
	if err != nil {
		var m *malformedError
		switch {
		case errors.Is(err, errNoRequest):
			return false
		case errors.Is(err, errHeadTooLarge):
			h.refuse(rec, Refusal{Cause: CauseHeadTooLarge, Kind: KindHTTP, Reason: err.Error()}, true)
		case errors.As(err, &m):
			h.refuse(rec, Refusal{Cause: CauseMalformed, Kind: KindHTTP, Reason: m.Error()}, true)
		default: // the client went away or stalled in the middle of a head
			rec.set(decisionFail, "reading the request head: "+err.Error())
			h.s.log(rec)
		}
		return false
	}
	h.c.raw.SetReadDeadline(time.Time{})
	if h.s.ProxyOnly != nil {
		return h.serveProxyOnly(head, rec) // proxyonly_http.go
	}
	if head.method == "CONNECT" {
		rec.kind = KindConnect.String()
		h.serveConnect(head, rec)
		return false
	}
	return h.serveRequest(head, rec)
}

// refuse writes the mode's answer to a refusal and records it. For a
// KindHTTP refusal the connection stays open unless close is set; a
// KindConnect refusal always closes it. It reports whether the
// connection may carry another request.
func (h *httpConn) refuse(rec *record, r Refusal, close bool) bool {
	decision := decisionFail
	if r.Cause == CauseDenied || r.Cause == CauseAddress || r.Cause == CauseAuth || deniedByPolicy(r.Cause) {
		decision = decisionDeny
	}
	rec.set(decision, r.Reason)
	if r.Reason == "" {
		rec.reason = causeNames[r.Cause]
	}
	if r.Kind == KindConnect {
		close = true
	}
	close = close || h.s.isClosing()
	a := h.s.Mode.Render(r)
	h.writeAnswer(a, r.Kind, close)
	h.s.log(rec)
	return !close
}

var causeNames = map[Cause]string{
	CauseDenied:       "denied",
	CauseAddress:      "address refused",
	CauseUnreachable:  "upstream unreachable",
	CauseUnavailable:  "decider unavailable",
	CauseAuth:         "proxy authentication required",
	CauseMalformed:    "malformed request",
	CauseHeadTooLarge: "request head too large",
	CauseUnaskable:    "request cannot be asked about",
	CauseInternal:     "internal error",
}

// writeAnswer writes a rendered refusal. A plain-HTTP answer carries
// Content-Length (and Connection: close when the connection ends); a
// CONNECT answer is written raw, its body ended by closing.
func (h *httpConn) writeAnswer(a Answer, kind Kind, close bool) {
	h.wmu.Lock()
	h.responseSent = true
	h.wmu.Unlock()
	w := h.bw
	w.WriteString("HTTP/1.1 ")
	w.WriteString(strconv.Itoa(a.Status))
	w.WriteByte(' ')
	w.WriteString(a.Phrase)
	w.WriteString("\r\n")
	for _, kv := range a.Header {
		w.WriteString(kv[0])
		w.WriteString(": ")
		w.WriteString(kv[1])
		w.WriteString("\r\n")
	}
	if kind != KindConnect {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.Itoa(len(a.Body)))
		w.WriteString("\r\n")
		if close {
			w.WriteString("Connection: close\r\n")
		}
	}
	w.WriteString("\r\n")
	w.WriteString(a.Body)
	h.c.raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	w.Flush()
	h.c.raw.SetWriteDeadline(time.Time{})
}

// requestContext is the context of one request: cancelled when the server
// closes.
func (h *httpConn) requestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(h.s.ctx)
}

// remoteAddr is the address of a connection the dialer opened, for the
// record.
func remoteAddr(c net.Conn) string {
	if c == nil || c.RemoteAddr() == nil {
		return ""
	}
	return c.RemoteAddr().String()
}
