package proxy

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// httpConn is a client connection speaking HTTP/1.x to the proxy.
type httpConn struct {
	s  *Server
	c  *serve.Conn
	br *bufio.Reader
	bw *bufio.Writer

	// A terminated tunnel's: how long a transfer may stall (0: no
	// limit), the bulk.Conn under the client's TLS (nil: none), the
	// Keep-Alive answer of kept-alive responses ("": none).
	stall     time.Duration
	bulk      *bulk.Conn
	keepAlive string

	wmu          sync.Mutex // orders a 100 Continue against the response head
	responseSent bool

	// trustFix is where an upstream certificate's CA is added, as the
	// refusal of an untrusted one says (a terminated tunnel's
	// Terminate.TrustFix); "": this host's trust store.
	trustFix string
}

// serveHTTP serves requests on a connection until it closes or one of
// them ends it (a CONNECT, a refusal that closes, a client asking for
// close).
func (s *Server) serveHTTP(c *serve.Conn, br *bufio.Reader) {
	h := &httpConn{s: s, c: c, br: br, bw: bufio.NewWriterSize(c.Raw, 4096)}
	defer func() {
		if h.br != nil { // not a tunnel: the last answer must not be lost to a reset
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
			_, err := h.br.Peek(1)
			c.Idle.Store(false)
			if err != nil {
				return
			}
		}
		c.Raw.SetReadDeadline(time.Now().Add(headTimeout))
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
	rec := serve.NewRecord("http")
	head := h.nextHead(rec)
	if head == nil {
		return false
	}
	h.c.Raw.SetReadDeadline(time.Time{})
	if h.s.ProxyOnly != nil {
		return h.serveProxyOnly(head, rec) // proxyonly_http.go
	}
	if head.Method == "CONNECT" {
		rec.Kind = ask.KindConnect.String()
		h.serveConnect(head, rec)
		return false
	}
	return h.serveRequest(head, rec)
}

// nextHead reads the next request head. When there is none it returns nil:
// the client closed between requests, went away or stalled in the middle
// of a head (recorded), or sent one too large or malformed (refused, and
// the connection is to close).
func (h *httpConn) nextHead(rec *serve.Record) *http1.RequestHead {
	head, err := http1.ReadHead(h.br, h.s.maxHead())
	if err == nil {
		return head
	}
	var m *http1.MalformedError
	switch {
	case errors.Is(err, http1.ErrNoRequest):
	case errors.Is(err, http1.ErrHeadTooLarge):
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseHeadTooLarge, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	case errors.As(err, &m):
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: m.Error()}, true)
	default: // the client went away or stalled in the middle of a head
		rec.Set(serve.Fail, "reading the request head: "+err.Error())
		h.s.log(rec)
	}
	return nil
}

// requestBody is the body of a request framed as kind and length (nil
// when it has none), read from the client as it is forwarded. An
// HTTP/1.1 client that expects 100 Continue gets it when the body is
// first read.
func (h *httpConn) requestBody(head *http1.RequestHead, kind http1.BodyKind, length int64) *http1.RequestBody {
	if kind == http1.BodyNone {
		return nil
	}
	var onFirst func()
	if head.Minor == 1 && http1.ExpectsContinue(head) {
		onFirst = h.sendContinue
	}
	return http1.NewRequestBody(kind, length, h.br, onFirst)
}

// askFailed answers a request Ask returned err for. A client that failed
// while its body was read for the decider (body) gets no answer: the
// connection ends. An unaskable request is refused (400), a body on a
// method that has none when the decider asked to see it too (403, the
// connection ends), and anything else as the decider being unavailable
// (503). close says whether those refusals end the connection. It reports
// whether the connection may carry another request.
func (h *httpConn) askFailed(rec *serve.Record, req *ask.Request, body *peekBody, err error, close bool) bool {
	if body != nil {
		if ferr := body.failed(); ferr != nil {
			rec.Set(serve.Fail, "reading the request body: "+ferr.Error())
			h.s.log(rec)
			return false
		}
	}
	r := refusal.Refusal{Cause: refusal.CauseUnavailable, Kind: ask.KindHTTP, Reason: refusal.DeciderReason(err.Error()), Host: req.Host}
	var u *ask.UnaskableError
	switch {
	case errors.As(err, &u):
		r.Cause, r.Reason = refusal.CauseUnaskable, u.Reason
	case errors.Is(err, ask.ErrBodylessBody):
		r.Cause, r.Reason, close = refusal.CauseBodyless, ask.ErrBodylessBody.Error(), true
	}
	return h.refuse(rec, r, close)
}

// refuse writes the mode's answer to a refusal and records it. For a
// KindHTTP refusal the connection stays open unless close is set; a
// KindConnect refusal always closes it. It reports whether the
// connection may carry another request.
func (h *httpConn) refuse(rec *serve.Record, r refusal.Refusal, close bool) bool {
	decision := serve.Fail
	if r.Cause == refusal.CauseDenied || r.Cause == refusal.CauseAddress || r.Cause == refusal.CauseAuth || refusal.DeniedByPolicy(r.Cause) {
		decision = serve.Deny
	}
	rec.Set(decision, r.Reason)
	rec.Code = r.Code()
	switch {
	case r.Log != "":
		rec.Reason = r.Log
	case r.Reason == "":
		rec.Reason = r.Cause.Name()
	}
	if r.Kind == ask.KindConnect {
		close = true
	}
	close = close || h.s.isClosing()
	a := h.s.Mode.Render(r)
	h.writeAnswer(a, r.Kind, close)
	h.s.log(rec)
	return !close
}

// writeAnswer writes a rendered refusal. A plain-HTTP answer carries
// Content-Length (and Connection: close when the connection ends); a
// CONNECT answer is written raw, its body ended by closing.
func (h *httpConn) writeAnswer(a refusal.Answer, kind ask.Kind, close bool) {
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
	if kind != ask.KindConnect {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.Itoa(len(a.Body)))
		w.WriteString("\r\n")
		if close {
			w.WriteString("Connection: close\r\n")
		}
	}
	w.WriteString("\r\n")
	w.WriteString(a.Body)
	h.c.Raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	w.Flush()
	h.c.Raw.SetWriteDeadline(time.Time{})
}

// requestContext is the context of one request: cancelled when the server
// closes.
func (h *httpConn) requestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(h.s.ctx)
}
