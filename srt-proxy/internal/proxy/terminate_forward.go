package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"slices"
	"strconv"
	"time"
)

// exchange is one allowed request on its way upstream.
type exchange struct {
	head       *requestHead
	req        *Request
	verdict    Verdict
	target     string // the request-target sent upstream
	hostHeader string // the Host header sent upstream
	kind       bodyKind
	length     int64
	wantsClose bool
	rec        *record
	rb         *reqBody     // the body as framed on the wire; nil when none
	body       *peekBody    // the body as the decider saw it: its first bytes may be held
	src        *stallReader // what the body sender reads: body.forward()
}

// forward sends an allowed request upstream and relays the response. It
// reports whether the tunnel may carry another request.
func (x *tlsSession) forward(ctx context.Context, ex *exchange) bool {
	h := x.h
	rec := ex.rec
	refuseClose := ex.wantsClose || ex.kind != bodyNone
	headBytes := upstreamHead(ex)
	body := ex.rb
	if body != nil {
		ex.src = &stallReader{r: ex.body.forward(), c: x.tc, d: x.stall()}
	}
	u, err := x.upstream(ctx)
	if err != nil {
		return h.upstreamFailed(rec, ex.req, err, refuseClose)
	}
	rec.addr = u.addr
	var sent chan error
	resp, err := x.roundTrip(u, ex, headBytes, body, &sent)
	if err != nil && body == nil && u.used && retryable(err) {
		x.dropUpstream()
		if u, err = x.upstream(ctx); err != nil {
			return h.upstreamFailed(rec, ex.req, err, refuseClose)
		}
		rec.addr = u.addr
		resp, err = x.roundTrip(u, ex, headBytes, nil, &sent)
	}
	u.used = true
	if err != nil {
		x.dropUpstream()
		x.endBody(ex, sent)
		if body != nil {
			if cerr := body.clientErr(); cerr != nil {
				rec.set(decisionFail, "reading the request body: "+cerr.Error())
				return false
			}
			rec.up = body.n.Load()
		}
		return h.upstreamFailed(rec, ex.req, err, true)
	}
	rec.set(decisionAllow, ex.verdict.Reason)
	keep, upstreamDone := x.relay(ex, resp)
	if !upstreamDone {
		// First: closing a body not read to its end reads the rest.
		x.dropUpstream()
	}
	resp.Body.Close()
	sendErr := x.endBody(ex, sent)
	if body != nil {
		keep = body.finish() && keep
		rec.up = body.n.Load()
		x.up += rec.up
	}
	x.down += rec.down
	if resp.Close || sendErr != nil {
		x.dropUpstream()
	}
	return keep
}

// roundTrip writes the request (its body from a goroutine of its own,
// reported on *sent) and reads the response head, skipping interim 1xx
// answers.
func (x *tlsSession) roundTrip(u *upConn, ex *exchange, headBytes []byte, body *reqBody, sent *chan error) (*http.Response, error) {
	u.tc.SetWriteDeadline(time.Now().Add(x.stall()))
	u.bw.Write(headBytes)
	if body == nil {
		if err := u.bw.Flush(); err != nil {
			return nil, err
		}
	} else {
		ch := make(chan error, 1)
		*sent = ch
		go func() { ch <- x.sendBody(u, ex, body) }()
	}
	u.tc.SetReadDeadline(time.Now().Add(x.stall()))
	if _, err := u.br.Peek(1); err != nil {
		return nil, &noAnswerError{err}
	}
	u.lim.arm()
	defer u.lim.disarm()
	for {
		resp, err := http.ReadResponse(u.br, &http.Request{Method: ex.head.method})
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
// announced.
func (x *tlsSession) sendBody(u *upConn, ex *exchange, body *reqBody) error {
	src := ex.src
	dst := &stallWriter{w: u.bw, c: u.tc, d: x.stall()}
	var err error
	if ex.kind == bodyChunked {
		cw := httputil.NewChunkedWriter(dst)
		if _, err = io.Copy(cw, src); err == nil {
			if err = cw.Close(); err == nil {
				_, err = io.WriteString(dst, "\r\n")
			}
		}
	} else {
		_, err = io.Copy(dst, src)
	}
	if err == nil {
		u.tc.SetWriteDeadline(time.Now().Add(x.stall()))
		err = u.bw.Flush()
	}
	return err
}

// endBody waits for the body sender. If it is still at work (the response
// came first), the upstream leg is cut and the client read interrupted so
// that it stops.
func (x *tlsSession) endBody(ex *exchange, sent chan error) error {
	if sent == nil {
		return nil
	}
	select {
	case err := <-sent:
		return err
	default:
	}
	x.dropUpstream()
	ex.src.abort()
	err := <-sent
	x.tc.SetReadDeadline(time.Time{})
	if err == nil {
		err = errors.New("request body cut short")
	}
	return err
}

// upstreamHead is the request head sent upstream: the request line with
// the chosen target, the Host header, the client's fields in their order
// without the hop-by-hop ones (names folded: '_' and '.' count as '-'),
// the verdict's edits, and the proxy's own framing.
func upstreamHead(ex *exchange) []byte {
	h, v := ex.head, ex.verdict
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(h.method)
	b.WriteByte(' ')
	b.WriteString(ex.target)
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(ex.hostHeader)
	b.WriteString("\r\n")
	named := connectionTokens(h.values("connection"))
	for n := range named {
		named[foldName(n)] = true
	}
	edited := make(map[string]bool, len(v.RemoveHeaders)+len(v.SetHeaders))
	for _, n := range v.RemoveHeaders {
		edited[foldName(n)] = true
	}
	for n := range v.SetHeaders {
		edited[foldName(n)] = true
	}
	for _, f := range h.fields {
		folded := foldName(f.lower)
		if dropRequestHeader(folded, named, false) || edited[folded] {
			continue
		}
		writeHeadField(&b, f.name, f.value)
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
		}
	}
	switch ex.kind {
	case bodyLength:
		writeHeadField(&b, "Content-Length", strconv.FormatInt(ex.length, 10))
	case bodyChunked:
		writeHeadField(&b, "Transfer-Encoding", "chunked")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

func writeHeadField(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

// noAnswerError is an upstream that closed or failed before the first byte
// of its response.
type noAnswerError struct{ err error }

func (e *noAnswerError) Error() string { return "no response: " + e.err.Error() }
func (e *noAnswerError) Unwrap() error { return e.err }
