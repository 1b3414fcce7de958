package forward

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/credmask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/sigv4"
)

// What a decision record says of the masked secrets an allow named
// (serve.Record.Inject).
const (
	InjectDone          = "injected"
	InjectHeadersOnly   = "injected in headers; body not scanned: it has a Content-Encoding"
	InjectNotPlaintext  = "not injected: a plain-HTTP request, and plaintext inject (--plaintext-inject) is off; the sentinels went as they are"
	InjectNotOnThisPath = "not injected: refused before forwarding"
	InjectPassedThrough = "not injected: a SigV4 request that cannot be signed again, passed through as signed (sigv4 passthrough)"
)

// injectMasks puts the masked secrets the verdict names (Verdict.Inject)
// back into ex before it goes upstream, when ex.Inject allows it: every
// sentinel in the client's header values (Host and Connection aside) and,
// unless the request has a Content-Encoding, in its body. A body whose
// length the values do not change streams as it is framed; one they
// change stays chunked if chunked, and a Content-Length body is read
// whole (up to refusal.MaxMaskedBody) and sent with its new length. An
// AWS request signed with a masked access key id is signed again with the
// real key (sigv4.Resign, which sees the head with its sentinels and the
// body as it will be sent). What cannot be done is refused (403
// inject_refused, the decider told): ok is false, and keep says whether
// the connection may carry another request. A SigV4 variant that cannot
// be signed again and that the sigv4 settings let pass goes unchanged,
// none of its sentinels replaced (sigv4.PassesThrough).
//
// This is the one place a request's masks change it.
func (h *Conn) injectMasks(ex *Exchange) (keep, ok bool) {
	if !ex.Inject {
		ex.Rec.Inject = InjectNotPlaintext
		return true, true
	}
	set, err := credmask.New(ex.Verdict.Inject)
	if err != nil {
		return h.refuseInject(ex, err.Error()), false
	}
	if sigv4.PassesThrough(sigv4.Head{Method: ex.Head.Method, Target: ex.Target, Host: ex.HostHeader, Fields: ex.Head.Fields}, ex.Verdict.Inject, h.sigv4Options()) {
		// As the client signed it, with the masked key: unchanged.
		ex.Rec.Inject = InjectPassedThrough
		return true, true
	}
	ex.Rec.Inject = InjectDone
	var body io.Reader // the body as it will be sent; nil: none
	if ex.src != nil {
		switch {
		case len(ex.Head.Values("content-encoding")) > 0:
			ex.Rec.Inject = InjectHeadersOnly
		case set.SameLength() || ex.Kind == http1.BodyChunked:
			ex.src.r = set.NewReader(ex.src.r)
		default:
			if ex.Length > refusal.MaxMaskedBody {
				return h.refuseInject(ex, refusal.WhyMaskedBodyTooLarge), false
			}
			b, err := io.ReadAll(io.LimitReader(set.NewReader(ex.src), refusal.MaxMaskedBody+1))
			if err != nil {
				return h.bodyFailed(ex, err), false
			}
			if len(b) > refusal.MaxMaskedBody {
				return h.refuseInject(ex, refusal.WhyMaskedBodyTooLarge), false
			}
			ex.Length = int64(len(b))
			ex.src.r = bytes.NewReader(b)
		}
		body = ex.src.r
	}
	head := *ex.Head
	head.Fields = slices.Clone(ex.Head.Fields)
	body, err = sigv4.Resign(sigv4.Head{Method: head.Method, Target: ex.Target, Host: ex.HostHeader, Fields: head.Fields},
		body, ex.Verdict.Inject, h.sigv4Options())
	var r *sigv4.Refusal
	switch {
	case errors.As(err, &r):
		return h.refuseInject(ex, r.Reason), false
	case err != nil:
		return h.bodyFailed(ex, err), false
	}
	if ex.src != nil {
		ex.src.r = body
	}
	if !replaceFields(head.Fields, set) {
		return h.refuseInject(ex, refusal.WhyMaskedHeaderBreak), false
	}
	ex.Head = &head
	return true, true
}

// sigv4Options are the run's sigv4 settings (rules.Rules).
func (h *Conn) sigv4Options() sigv4.Options {
	p := func(m rules.SigV4Mode) sigv4.Policy {
		if m == rules.SigV4Passthrough {
			return sigv4.Passthrough
		}
		return sigv4.Deny
	}
	r := h.Env.Rules
	return sigv4.Options{Streaming: p(r.SigV4Streaming), Presigned: p(r.SigV4Presigned), SigV4A: p(r.SigV4A)}
}

// replaceFields replaces the sentinels in header field values in place;
// Host (checked against the destination the decider was asked about) and
// Connection (hop-by-hop: it names fields to drop) stay as they are. It
// reports false when a value put in holds a CR, LF or NUL, which would
// end the field (or the head) early upstream: the request cannot go (a
// field as read holds none of them).
func replaceFields(fields []http1.Field, set *credmask.Set) bool {
	for i := range fields {
		f := &fields[i]
		if f.Lower != "host" && f.Lower != "connection" {
			f.Value = set.Replace(f.Value)
			if strings.ContainsAny(f.Value, "\r\n\x00") {
				return false
			}
		}
	}
	return true
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
