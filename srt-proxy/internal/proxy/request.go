package proxy

import (
	"errors"
	"net/url"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// serveRequest serves one plain-HTTP (absolute-form) request: authenticate,
// ask, forward, relay the response. It reports whether the connection may
// carry another request.
func (h *httpConn) serveRequest(head *http1.RequestHead, rec *serve.Record) bool {
	kind, length, err := http1.Framing(head)
	if err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.Minor == 0 || http1.ConnectionTokens(head.Values("connection"))["close"]
	// A refusal keeps the connection only if no request body is left unread.
	refuseClose := wantsClose || kind != http1.BodyNone

	user, consumed, ok := h.s.authenticate(head)
	if !ok {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindHTTP}, refuseClose)
	}
	rec.User = user
	t, err := http1.ParseAbsoluteTarget(head.Target)
	if err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, refuseClose)
	}
	req := &ask.Request{Kind: ask.KindHTTP, User: user, Method: head.Method, Host: t.Host, Port: t.Port,
		Path: t.Path, Query: t.Query, Headers: http1.AskHeaders(head, consumed)}
	rec.About(req)
	if c, why := h.s.plainRules(head, &t); c != 0 {
		return h.refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: t.Host}, refuseClose)
	}
	req.Path = t.Path
	switch hosts := head.Values("host"); len(hosts) {
	case 0:
	case 1:
		req.HostHeader = hosts[0]
	default:
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseUnaskable, Kind: ask.KindHTTP, Reason: refusal.WhyTwoHosts}, refuseClose)
	}
	if why := http1.Unaskable(req); why != "" {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseUnaskable, Kind: ask.KindHTTP, Reason: why}, refuseClose)
	}

	ctx, cancel := h.requestContext()
	defer cancel()
	v, err := h.s.Asker.Ask(ctx, req)
	if err != nil {
		return h.askFailed(rec, req, nil, err, refuseClose)
	}
	if !v.Allow {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindHTTP, Status: v.Status, Reason: v.Reason, Host: req.Host}, refuseClose)
	}
	if !h.s.Rules.PlaintextHeaderSet && setsHeaders(v) {
		h.s.Asker.Refused(req, refusal.WhyPlaintextHeaderSet)
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CausePlaintextHeaderSet, Kind: ask.KindHTTP, Reason: refusal.WhyPlaintextHeaderSet, Host: req.Host}, refuseClose)
	}

	// The path goes upstream as spelled; one whose %-escapes do not
	// decode is malformed.
	if _, err := url.PathUnescape(t.Path); err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: http1.Malformed("request-target path encoding").Error()}, refuseClose)
	}
	body := h.requestBody(head, kind, length)
	target := t.Path
	if t.Query != "" {
		target += "?" + t.Query
	}
	ex := &exchange{head: head, req: req, verdict: v, scheme: t.Scheme, target: target,
		hostHeader: http1.HostAuthority(t.Scheme, t.Host, t.Port), kind: kind, length: length,
		wantsClose: wantsClose, authConsumed: consumed, rec: rec, rb: body}
	keep := h.forward(ctx, ex, pooledUpstream{h})
	h.s.log(rec)
	return keep
}

// upstreamFailed answers a request whose upstream leg failed after an
// allow, and tells the decider.
func (h *httpConn) upstreamFailed(rec *serve.Record, req *ask.Request, err error, close bool) bool {
	var refused *dial.AddressRefusedError
	if errors.As(err, &refused) {
		h.s.Asker.Refused(req, refused.Reason)
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAddress, Kind: req.Kind, Reason: refused.Reason, Host: req.Host}, close)
	}
	why := unreachableReason(err)
	h.s.Asker.Refused(req, why)
	f, text := pool.Describe(err, req.Host, req.Port, h.trustFix)
	h.s.warnOnce(f, req.Host, req.Port, text)
	return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseUnreachable, Kind: req.Kind, Reason: text, Failure: f, Log: why, Host: req.Host}, close)
}

// unreachableReason is the refusal reason of a failed upstream leg,
// "upstream unreachable: …".
func unreachableReason(err error) string {
	var u *dial.UnreachableError
	if errors.As(err, &u) {
		return u.Error()
	}
	return "upstream unreachable: " + err.Error()
}

// sendContinue tells the client to send its body, unless the response has
// already started.
func (h *httpConn) sendContinue() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.responseSent {
		return
	}
	h.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
	h.bw.Flush()
}

// plainRules applies the rules to a plain-HTTP request of srt's mode
// before the decider is asked, in the order of a terminated tunnel's
// requests: requireHostMatch (421), then ambiguousRequestTarget (400, or
// t.path replaced by the form to ask about and forward). It returns the
// cause and reason of a refusal, or 0.
func (s *Server) plainRules(head *http1.RequestHead, t *http1.AbsTarget) (refusal.Cause, string) {
	if why := s.Rules.HostMismatch(head.Values("host"), http1.DefaultPort(t.Scheme), t.Host, t.Port); why != "" {
		return refusal.CauseMisdirected, why
	}
	if s.Rules.CheckPlainTargets {
		p, ok := s.Rules.AmbiguousTarget.Resolve(t.Path)
		if !ok {
			return refusal.CauseAmbiguousTarget, refusal.WhyAmbiguous
		}
		t.Path = p
	}
	return 0, ""
}
