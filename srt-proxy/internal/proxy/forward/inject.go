package forward

import (
	"bytes"
	"io"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/credmask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// What a decision record says of the masked secrets an allow named
// (serve.Record.Inject).
const (
	InjectDone          = "injected"
	InjectHeadersOnly   = "injected in headers; body not scanned: it has a Content-Encoding"
	InjectNotPlaintext  = "not injected: a plain-HTTP request, and plaintext inject (--plaintext-inject) is off; the sentinels went as they are"
	InjectNotOnThisPath = "not injected: refused before forwarding"
)

// injectMasks puts the masked secrets the verdict names (Verdict.Inject)
// back into ex before it goes upstream, when ex.Inject allows it: every
// sentinel in the client's header values (Host and Connection aside) and,
// unless the request has a Content-Encoding, in its body. A body whose
// length the values do not change streams as it is framed; one they
// change stays chunked if chunked, and a Content-Length body is read
// whole (up to refusal.MaxMaskedBody) and sent with its new length. Over
// that the request is refused (403 inject_refused, the decider told):
// ok is false and keep says whether the connection may carry another
// request.
//
// This is the one place a request's masks change it. SigV4 re-signing
// (a request signed with a masked AWS access key id) hooks in at the mark
// below: it has the head as it will go (sentinels replaced), the body
// (ex.src; read it whole to sign it, as the buffered case does, and put a
// reader of what it read back) and the masks.
func (h *Conn) injectMasks(ex *Exchange) (keep, ok bool) {
	if !ex.Inject {
		ex.Rec.Inject = InjectNotPlaintext
		return true, true
	}
	set, err := credmask.New(ex.Verdict.Inject)
	if err != nil {
		return h.refuseInject(ex, err.Error()), false
	}
	head, ok := replaceHead(ex.Head, set)
	if !ok {
		return h.refuseInject(ex, refusal.WhyMaskedHeaderBreak), false
	}
	ex.Head = head
	ex.Rec.Inject = InjectDone
	switch {
	case ex.src == nil:
	case len(ex.Head.Values("content-encoding")) > 0:
		ex.Rec.Inject = InjectHeadersOnly
	case set.SameLength() || ex.Kind == http1.BodyChunked:
		ex.src.r = set.NewReader(ex.src.r)
	default:
		if ex.Length > refusal.MaxMaskedBody {
			return h.refuseInject(ex, refusal.WhyMaskedBodyTooLarge), false
		}
		body, err := io.ReadAll(io.LimitReader(set.NewReader(ex.src), refusal.MaxMaskedBody+1))
		if err != nil {
			return h.bodyFailed(ex, err), false
		}
		if len(body) > refusal.MaxMaskedBody {
			return h.refuseInject(ex, refusal.WhyMaskedBodyTooLarge), false
		}
		ex.Length = int64(len(body))
		ex.src.r = bytes.NewReader(body)
	}
	// SigV4 re-signing goes here (package sigv4): ex.Head, ex.src,
	// ex.Verdict.Inject.
	return true, true
}

// replaceHead is a copy of head with the sentinels in its field values
// replaced; Host (checked against the destination the decider was asked
// about) and Connection (hop-by-hop: it names fields to drop) stay as
// they are. ok is false when a value put in holds a CR, LF or NUL, which
// would end the field (or the head) early upstream: the request cannot
// go (a field as read holds none of them).
func replaceHead(head *http1.RequestHead, set *credmask.Set) (c *http1.RequestHead, ok bool) {
	cp := *head
	cp.Fields = make([]http1.Field, len(head.Fields))
	for i, f := range head.Fields {
		if f.Lower != "host" && f.Lower != "connection" {
			f.Value = set.Replace(f.Value)
			if strings.ContainsAny(f.Value, "\r\n\x00") {
				return nil, false
			}
		}
		cp.Fields[i] = f
	}
	return &cp, true
}

// refuseInject refuses ex (its body unread, or read in part: the
// connection closes) because its masks cannot be put back, and tells the
// decider.
func (h *Conn) refuseInject(ex *Exchange, why string) bool {
	ex.Rec.Inject = InjectNotOnThisPath
	h.Env.Asker.Refused(ex.Req, why)
	return h.Refuse(ex.Rec, refusal.Refusal{Cause: refusal.CauseInjectRefused, Kind: ask.KindHTTP, Reason: why, Host: ex.Req.Host}, true)
}

// bodyFailed records a client body that failed while it was read whole:
// no answer can follow (the connection ends).
func (h *Conn) bodyFailed(ex *Exchange, err error) bool {
	ex.Rec.Set(serve.Fail, "reading the request body: "+err.Error())
	return false
}
