package proxyonly

import (
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// serve serves one request of proxy-only mode (a CONNECT or a
// plain-HTTP request); it reports whether the connection may carry
// another.
func (m mode) serve(h *forward.Conn, head *http1.RequestHead, rec *serve.Record) bool {
	if head.Method == "CONNECT" {
		rec.Kind = ask.KindConnect.String()
		m.serveConnect(h, head, rec)
		return false
	}
	return m.serveRequest(h, head, rec)
}

// serveRequest serves a plain-HTTP request in proxy-only mode,
// refusing in the reference's order: the destination's spelling, the host
// gate, the request-target, the Host header, the method, then the
// decider. A refusal before the decider keeps the connection (when no
// body is left unread); one from the decider's turn on closes it.
//
//	head ─▶ plain-ASCII host? ─▶ gate ─▶ target as spelled ─▶ Host names target? ─▶ TRACE?
//	  400 bad_request    403 host_not_allowed   400        400 / 421 misdirected    405
//	─▶ askable? ─▶ decider (need_body: the body is read for it) ─▶ deny ─▶ sets headers? ─▶ forward
//	   400           503 decider_unavailable, 403 bodyless         decider   403 plaintext_header_set
func (m mode) serveRequest(h *forward.Conn, head *http1.RequestHead, rec *serve.Record) bool {
	po := m.gate
	kind, length, err := http1.Framing(head)
	if err != nil {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.Minor == 0 || http1.ConnectionTokens(head.Values("connection"))["close"]
	// Before the decider's turn a refusal keeps the connection unless a
	// request body is left unread; from it on every refusal closes.
	early := wantsClose || kind != http1.BodyNone
	refuse := func(c refusal.Cause, why string, close bool) bool {
		return h.Refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: rec.Host}, close)
	}
	if why := absoluteFormProblem(head.Target); why != "" {
		return refuse(refusal.CauseBadRequest, why, early)
	}
	t, err := http1.ParseAbsoluteTarget(head.Target)
	if err != nil {
		return refuse(refusal.CauseBadRequest, refusal.WhyMalformedTarget, early)
	}
	rec.Host, rec.Port = t.Host, t.Port
	if ok, why := po.Allows(t.Host, t.Port); !ok {
		return refuse(refusal.CauseHostNotAllowed, why, early)
	}
	spelled, ok := targetAsSpelled(head.Target)
	if !ok {
		return refuse(refusal.CauseBadRequest, refusal.WhyMalformedTarget, early)
	}
	hosts := head.Values("host")
	if len(hosts) == 0 && head.Minor == 1 {
		return refuse(refusal.CauseBadRequest, refusal.WhyNoHostHeader, early)
	}
	if why := hostMismatch(hosts, t.Host, t.Port, http1.DefaultPort(t.Scheme)); why != "" {
		return refuse(refusal.CauseMisdirected, why, early)
	}
	if http1.IsEchoMethod(head.Method) {
		return refuse(refusal.CauseMethodRefused, refusal.MethodRefused(head.Method), true)
	}

	path, query, _ := strings.Cut(spelled, "?")
	req := &ask.Request{Kind: ask.KindHTTP, Method: head.Method, Host: t.Host, Port: t.Port, Path: path, Query: query}
	req.Headers, req.HeaderNames = http1.OrderedAskHeaders(head)
	if len(hosts) == 1 {
		req.HostHeader = hosts[0]
	}
	rec.About(req)
	if why := http1.Unaskable(req); why != "" {
		return refuse(refusal.CauseUnaskable, why, true)
	}
	rb := h.RequestBody(head, kind, length)
	body := forward.NewPeekBody(head.Method, rb, length, h.Client.Raw)
	req.Body = body

	ctx, cancel := h.RequestContext()
	defer cancel()
	v, err := m.Asker.Ask(ctx, req)
	if err != nil {
		return h.AskFailed(rec, req, body, err, true)
	}
	if !v.Allow {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindHTTP, Status: v.Status, Reason: v.Reason, Host: t.Host}, true)
	}
	if !m.Rules.PlaintextHeaderSet && v.SetsHeaders() {
		return refuse(refusal.CausePlaintextHeaderSet, refusal.WhyPlaintextHeaderSet, true)
	}
	return m.forwardRequest(h, rec, head, t, spelled, v, req, body, kind, wantsClose)
}
