// Package forward serves HTTP/1.1 on a client connection once its handler
// has decided: it reads request heads and bodies, writes the proxy's
// refusals (rendered by the mode), forwards an allowed request over a
// kept-alive upstream connection (the pool's for plain HTTP, a terminated
// tunnel's own) and relays the response, re-framed, without hop-by-hop
// headers, streamed. It asks the decider nothing itself: the handlers
// (proxy, proxyonly, terminate) do, and pass the verdict in an Exchange.
//
// No goroutine of its own runs per request or per upstream connection,
// save one that sends a request body while the response is awaited, and
// a watch (after a delay) for a client that goes away while the upstream
// is slow.
package forward

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// Conn is a client connection speaking HTTP/1.x to the proxy: a plain
// one, or the decrypted stream of a terminated tunnel. Its handler reads
// each head with NextHead, answers what it refuses with Refuse, and hands
// what the decider allowed to Forward.
type Conn struct {
	Env    *serve.Env
	Client *serve.Conn   // the connection (in a terminated tunnel: over its TLS)
	BR     *bufio.Reader // reads Client; nil once the connection is a tunnel
	BW     *bufio.Writer // writes Client; nil once the connection is a tunnel

	// A terminated tunnel's: how long a transfer may stall (0: no
	// limit), the bulk.Conn under the client's TLS (nil: none), the
	// Keep-Alive answer of kept-alive responses ("": none).
	Stall     time.Duration
	Bulk      *bulk.Conn
	KeepAlive string

	wmu          sync.Mutex // orders a 100 Continue against the response head
	responseSent bool

	// TrustFix is where an upstream certificate's CA is added, as the
	// refusal of an untrusted one says (a terminated tunnel's
	// Terminate.TrustFix); "": this host's trust store.
	TrustFix string
}

// HeadTimeout bounds the reading of a request head once it has started.
const HeadTimeout = 30 * time.Second

// BeginRequest readies the connection for its next request: no response
// to it has been sent.
func (h *Conn) BeginRequest() {
	h.wmu.Lock()
	h.responseSent = false
	h.wmu.Unlock()
}

// NextHead reads the next request head. When there is none it returns nil:
// the client closed between requests, went away or stalled in the middle
// of a head (recorded), or sent one too large or malformed (refused, and
// the connection is to close).
func (h *Conn) NextHead(rec *serve.Record) *http1.RequestHead {
	head, err := http1.ReadHead(h.BR, h.Env.MaxHead)
	if err == nil {
		return head
	}
	var m *http1.MalformedError
	switch {
	case errors.Is(err, http1.ErrNoRequest):
	case errors.Is(err, http1.ErrHeadTooLarge):
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseHeadTooLarge, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	case errors.As(err, &m):
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: m.Error()}, true)
	default: // the client went away or stalled in the middle of a head
		rec.Set(serve.Fail, "reading the request head: "+err.Error())
		h.Env.Log(rec)
	}
	return nil
}

// RequestBody is the body of a request framed as kind and length (nil
// when it has none), read from the client as it is forwarded. An
// HTTP/1.1 client that expects 100 Continue gets it when the body is
// first read.
func (h *Conn) RequestBody(head *http1.RequestHead, kind http1.BodyKind, length int64) *http1.RequestBody {
	if kind == http1.BodyNone {
		return nil
	}
	var onFirst func()
	if head.Minor == 1 && http1.ExpectsContinue(head) {
		onFirst = h.sendContinue
	}
	return http1.NewRequestBody(kind, length, h.BR, onFirst)
}

// AskFailed answers a request Ask returned err for. A client that failed
// while its body was read for the decider (body) gets no answer: the
// connection ends. An unaskable request is refused (400), a body on a
// method that has none when the decider asked to see it too (403, the
// connection ends), and anything else as the decider being unavailable
// (503). close says whether those refusals end the connection. It reports
// whether the connection may carry another request.
func (h *Conn) AskFailed(rec *serve.Record, req *ask.Request, body *PeekBody, err error, close bool) bool {
	if body != nil {
		if ferr := body.failed(); ferr != nil {
			rec.Set(serve.Fail, "reading the request body: "+ferr.Error())
			h.Env.Log(rec)
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
	return h.Refuse(rec, r, close)
}

// Refuse writes the mode's answer to a refusal and records it. For a
// KindHTTP refusal the connection stays open unless close is set; a
// KindConnect refusal always closes it. It reports whether the
// connection may carry another request.
func (h *Conn) Refuse(rec *serve.Record, r refusal.Refusal, close bool) bool {
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
	close = close || h.Env.Closing()
	a := h.Env.Mode.Render(r)
	h.WriteAnswer(a, r.Kind, close)
	h.Env.Log(rec)
	return !close
}

// WriteAnswer writes a rendered refusal. A plain-HTTP answer carries
// Content-Length (and Connection: close when the connection ends); a
// CONNECT answer is written raw, its body ended by closing.
func (h *Conn) WriteAnswer(a refusal.Answer, kind ask.Kind, close bool) {
	h.wmu.Lock()
	h.responseSent = true
	h.wmu.Unlock()
	w := h.BW
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
	h.Client.Raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	w.Flush()
	h.Client.Raw.SetWriteDeadline(time.Time{})
}

// RequestContext is the context of one request: cancelled when the server
// closes.
func (h *Conn) RequestContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(h.Env.Ctx)
}

// UpstreamFailed answers a request whose upstream leg failed after an
// allow, and tells the decider.
func (h *Conn) UpstreamFailed(rec *serve.Record, req *ask.Request, err error, close bool) bool {
	var refused *dial.AddressRefusedError
	if errors.As(err, &refused) {
		h.Env.Asker.Refused(req, refused.Reason)
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseAddress, Kind: req.Kind, Reason: refused.Reason, Host: req.Host}, close)
	}
	why := pool.UnreachableReason(err)
	h.Env.Asker.Refused(req, why)
	f, text := pool.Describe(err, req.Host, req.Port, h.TrustFix)
	h.Env.Warn(f, req.Host, req.Port, text)
	return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseUnreachable, Kind: req.Kind, Reason: text, Failure: f, Log: why, Host: req.Host}, close)
}

// sendContinue tells the client to send its body, unless the response has
// already started.
func (h *Conn) sendContinue() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.responseSent {
		return
	}
	h.BW.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
	h.BW.Flush()
}
