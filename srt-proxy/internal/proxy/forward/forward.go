package forward

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// Exchange is one allowed request on its way upstream.
type Exchange struct {
	Head       *http1.RequestHead
	Req        *ask.Request
	Verdict    ask.Verdict
	Scheme     string // the destination's: "http" or "https"
	Target     string // the request-target sent upstream, in origin form
	HostHeader string // the Host header sent upstream
	Kind       http1.BodyKind
	Length     int64
	WantsClose bool
	// Which client fields stay behind: ProxyOnly drops every hop-by-hop
	// field (http1.DropProxyOnly); otherwise http1.DropRequestHeader
	// applies, with AuthConsumed saying the Proxy-Authorization carried
	// our token.
	ProxyOnly, AuthConsumed bool
	// Inject lets the verdict's masked secrets (Verdict.Inject) be put
	// back (injectMasks): the handler sets it for requests read inside a
	// TLS-terminated tunnel, and for plain HTTP under
	// rules.Rules.PlaintextInject.
	Inject bool
	Rec    *serve.Record
	RB     *http1.RequestBody // the body as framed on the wire; nil when none
	Body   *PeekBody          // the body as the decider saw it (its first bytes may be held); nil: RB as it is
	src    *stallReader       // what the body sender reads
	// watch follows the client once the request is upstream in full
	// (clientWatch); nil until then.
	watch *clientWatch
}

// Upstreams is where a client connection's exchanges get their upstream
// connections: a terminated tunnel keeps one of its own (package
// terminate), plain-HTTP requests share the server's pool (Conn.Pooled).
type Upstreams interface {
	// Get returns a connection for ex: a kept one that is still alive,
	// unless fresh is asked for, else a new one.
	Get(ctx context.Context, ex *Exchange, fresh bool) (*pool.Conn, error)
	// Done hands u back after an exchange: kept for the next one when
	// reusable, else closed.
	Done(u *pool.Conn, reusable bool)
}

// Forward sends an allowed request upstream and relays the response. It
// reports whether the client connection may carry another request.
func (h *Conn) Forward(ctx context.Context, ex *Exchange, ups Upstreams) bool {
	rec := ex.Rec
	refuseClose := ex.WantsClose || ex.Kind != http1.BodyNone
	body := ex.RB
	if body != nil {
		var r io.Reader = body
		if ex.Body != nil {
			r = ex.Body.forward()
		}
		ex.src = &stallReader{r: r, c: h.Client.Raw, d: h.Stall}
	}
	if len(ex.Verdict.Inject) > 0 {
		if keep, ok := h.injectMasks(ex); !ok {
			if body != nil {
				rec.Up = body.BytesRead()
			}
			return keep
		}
	}
	u, err := ups.Get(ctx, ex, false)
	if err != nil {
		return h.UpstreamFailed(rec, ex.Req, err, refuseClose)
	}
	rec.Addr = u.Addr
	var sent chan error
	resp, err := h.roundTrip(u, ex, body, &sent)
	if err != nil && body == nil && u.Used && idempotent(ex.Head.Method) && pool.Retryable(err) && !ex.watch.stop() {
		ups.Done(u, false)
		if u, err = ups.Get(ctx, ex, true); err != nil {
			return h.UpstreamFailed(rec, ex.Req, err, refuseClose)
		}
		rec.Addr = u.Addr
		resp, err = h.roundTrip(u, ex, nil, &sent)
	}
	u.Used = true
	if err != nil {
		ups.Done(u, false)
		h.endBody(ex, u, sent)
		if ex.watch.stop() {
			rec.Set(serve.Fail, "the client went away before the upstream answered")
			return false
		}
		complete := true
		if body != nil {
			if cerr := body.ClientErr(); cerr != nil {
				rec.Set(serve.Fail, "reading the request body: "+cerr.Error())
				return false
			}
			rec.Up = body.BytesRead()
			complete = body.Finish()
		}
		return h.UpstreamFailed(rec, ex.Req, err, ex.WantsClose || !complete)
	}
	rec.Set(serve.Allow, ex.Verdict.Reason)
	keep, upstreamDone := h.relay(ex, resp, u)
	if !upstreamDone {
		// First: closing a body not read to its end reads the rest.
		u.Close()
	}
	resp.Body.Close()
	sendErr := h.endBody(ex, u, sent)
	// A client that closed once it had the whole response cut a leg that
	// was done: only the kept connection is lost.
	gone := ex.watch.stop()
	if gone && !upstreamDone {
		rec.Set(serve.Fail, "the client went away before the response was complete")
	}
	if body != nil {
		keep = body.Finish() && keep
		rec.Up = body.BytesRead()
	}
	ups.Done(u, upstreamDone && !resp.Close && sendErr == nil && !gone)
	return keep && !gone
}

// idempotent reports whether a request with method may be sent twice
// (RFC 9110 §9.2.2): only such a request is sent again on a new connection
// when a kept one fails, as the upstream may have acted on the first.
func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// roundTrip writes the request (its body from a goroutine of its own,
// reported on *sent) and reads the response head, skipping interim 1xx
// answers. A body the client fails to deliver cuts the upstream leg.
func (h *Conn) roundTrip(u *pool.Conn, ex *Exchange, body *http1.RequestBody, sent *chan error) (*http.Response, error) {
	if h.Stall > 0 {
		u.Net.SetWriteDeadline(time.Now().Add(h.Stall))
	}
	u.BW.Write(upstreamHead(ex, u))
	if body == nil {
		if err := u.BW.Flush(); err != nil {
			return nil, err
		}
		ex.watch = h.watchClient(u.Close)
	} else {
		ch := make(chan error, 1)
		*sent = ch
		go func() {
			err := h.sendBody(u, ex)
			if err != nil && body.ClientErr() != nil {
				// The client's body failed (malformed, cut short): the
				// upstream, waiting for the rest, will not answer, so
				// the wait for its response ends here.
				u.Close()
			}
			if err == nil {
				ex.watch = h.watchClient(u.Close)
			}
			ch <- err
		}()
	}
	if h.Stall > 0 {
		u.Net.SetReadDeadline(time.Now().Add(h.Stall))
	}
	if _, err := u.BR.Peek(1); err != nil {
		return nil, &pool.NoAnswerError{Err: err}
	}
	u.ArmHeadLimit()
	defer u.DisarmHeadLimit()
	for {
		resp, err := http.ReadResponse(u.BR, &http.Request{Method: ex.Head.Method})
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // 100 Continue and the like: the proxy sent its own
		}
		return resp, nil
	}
}

// sendBody streams the request body upstream, re-framed as the head
// announced. What each read from the client gives goes out at once (the
// head with the first of it), as net/http's Transport flushed every chunk
// (golang.org/issue/6574): a body sent slowly, or a stream whose client
// waits for the upstream's answer before it sends more, is not held back
// in the buffer.
func (h *Conn) sendBody(u *pool.Conn, ex *Exchange) error {
	src := ex.src
	dst := &stallWriter{w: u.BW, c: u.Net, d: h.Stall}
	flush := func() error {
		if h.Stall > 0 {
			u.Net.SetWriteDeadline(time.Now().Add(h.Stall))
		}
		return u.BW.Flush()
	}
	var err error
	if ex.Kind == http1.BodyChunked {
		cw := httputil.NewChunkedWriter(dst)
		if _, err = io.Copy(flushingWriter{cw, flush}, src); err == nil {
			if err = cw.Close(); err == nil {
				_, err = io.WriteString(dst, "\r\n")
			}
		}
	} else {
		_, err = io.Copy(flushingWriter{dst, flush}, src)
	}
	if err == nil {
		err = flush()
	}
	return err
}

// flushingWriter flushes after every write.
type flushingWriter struct {
	w     io.Writer
	flush func() error
}

func (f flushingWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.flush()
	}
	return n, err
}

// endBody waits for the body sender. If it is still at work (the response
// came first), the upstream leg is cut and the client read interrupted so
// that it stops.
func (h *Conn) endBody(ex *Exchange, u *pool.Conn, sent chan error) error {
	if sent == nil {
		return nil
	}
	select {
	case err := <-sent:
		return err
	default:
	}
	u.Close()
	ex.src.abort()
	err := <-sent
	h.Client.Raw.SetReadDeadline(time.Time{})
	if err == nil {
		err = errors.New("request body cut short")
	}
	return err
}

// upstreamHead is the request head sent upstream: the request line with
// the exchange's target (in absolute form to a parent proxy), the Host
// header, the client's fields in their order without the ones that stay
// behind (names folded: '_' and '.' count as '-'), the verdict's edits,
// the parent's credentials, and the proxy's own framing.
func upstreamHead(ex *Exchange, u *pool.Conn) []byte {
	h, v := ex.Head, ex.Verdict
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(h.Method)
	b.WriteByte(' ')
	if u.Parent != nil {
		b.WriteString(ex.Scheme)
		b.WriteString("://")
		b.WriteString(http1.HostAuthority(ex.Scheme, ex.Req.Host, ex.Req.Port))
	}
	b.WriteString(ex.Target)
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(ex.HostHeader)
	b.WriteString("\r\n")
	named := http1.ConnectionTokens(h.Values("connection"))
	edited := make(map[string]bool, len(v.RemoveHeaders)+len(v.SetHeaders))
	for _, n := range v.RemoveHeaders {
		edited[http1.FoldName(n)] = true
	}
	for n := range v.SetHeaders {
		edited[http1.FoldName(n)] = true
	}
	hasProxyAuth := false
	for _, f := range h.Fields {
		folded := http1.FoldName(f.Lower)
		if ex.drops(folded, named) || edited[folded] {
			continue
		}
		hasProxyAuth = hasProxyAuth || folded == "proxy-authorization"
		writeHeadField(&b, f.Name, f.Value)
	}
	names := make([]string, 0, len(v.SetHeaders))
	for n := range v.SetHeaders {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		k := textproto.CanonicalMIMEHeaderKey(n)
		for _, val := range v.SetHeaders[n] {
			writeHeadField(&b, k, val)
			hasProxyAuth = hasProxyAuth || http1.FoldName(n) == "proxy-authorization"
		}
	}
	if auth := dial.ProxyAuthorization(u.Parent); auth != "" && !hasProxyAuth {
		writeHeadField(&b, "Proxy-Authorization", auth)
	}
	switch {
	case ex.Kind == http1.BodyLength:
		writeHeadField(&b, "Content-Length", strconv.FormatInt(ex.Length, 10))
	case ex.Kind == http1.BodyChunked:
		writeHeadField(&b, "Transfer-Encoding", "chunked")
	case len(h.Values("content-length")) > 0:
		writeHeadField(&b, "Content-Length", "0") // an empty body said so: some servers want a length on a POST
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// drops reports whether a client's header field (its folded name) stays
// behind.
func (ex *Exchange) drops(folded string, named map[string]bool) bool {
	if ex.ProxyOnly {
		return http1.DropProxyOnly(folded, named)
	}
	return http1.DropRequestHeader(folded, named, ex.AuthConsumed)
}

func writeHeadField(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

// stallReader gives each read from a connection d to make progress (0: as
// long as it takes), until abort.
type stallReader struct {
	r io.Reader
	c net.Conn
	d time.Duration

	mu      sync.Mutex // orders abort's deadline after every Read's
	aborted bool
}

func (s *stallReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	if s.aborted {
		s.mu.Unlock()
		return 0, errAborted
	}
	if s.d > 0 {
		s.c.SetReadDeadline(time.Now().Add(s.d))
	}
	s.mu.Unlock()
	return s.r.Read(p)
}

// abort makes a Read in progress, and every later one, fail soon.
func (s *stallReader) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	s.c.SetReadDeadline(time.Unix(1, 0))
}

// stallWriter gives each write to a connection d to make progress (0: as
// long as it takes).
type stallWriter struct {
	w io.Writer
	c net.Conn
	d time.Duration
}

func (s *stallWriter) Write(p []byte) (int, error) {
	if s.d > 0 {
		s.c.SetWriteDeadline(time.Now().Add(s.d))
	}
	return s.w.Write(p)
}
