package proxy

import (
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// serveProxyOnly serves one request of proxy-only mode (a CONNECT or a
// plain-HTTP request); it reports whether the connection may carry
// another.
func (h *httpConn) serveProxyOnly(head *requestHead, rec *record) bool {
	if head.method == "CONNECT" {
		rec.kind = ask.KindConnect.String()
		h.serveProxyOnlyConnect(head, rec)
		return false
	}
	return h.serveProxyOnlyRequest(head, rec)
}

// serveProxyOnlyRequest serves a plain-HTTP request in proxy-only mode,
// refusing in the reference's order: the destination's spelling, the host
// gate, the request-target, the Host header, the method, then the
// decider. A refusal before the decider keeps the connection (when no
// body is left unread); one from the decider's turn on closes it.
//
//	head ─▶ plain-ASCII host? ─▶ gate ─▶ target as spelled ─▶ Host names target? ─▶ TRACE?
//	  400 bad_request    403 host_not_allowed   400        400 / 421 misdirected    405
//	─▶ askable? ─▶ decider (need_body: the body is read for it) ─▶ deny ─▶ sets headers? ─▶ forward
//	   400           503 decider_unavailable, 403 bodyless         decider   403 plaintext_header_set
func (h *httpConn) serveProxyOnlyRequest(head *requestHead, rec *record) bool {
	po := h.s.ProxyOnly
	kind, length, err := framing(head)
	if err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.minor == 0 || connectionTokens(head.values("connection"))["close"]
	// Before the decider's turn a refusal keeps the connection unless a
	// request body is left unread; from it on every refusal closes.
	early := wantsClose || kind != bodyNone
	refuse := func(c refusal.Cause, why string, close bool) bool {
		return h.refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: rec.host}, close)
	}
	if why := absoluteFormProblem(head.target); why != "" {
		return refuse(refusal.CauseBadRequest, why, early)
	}
	t, err := parseAbsoluteTarget(head.target)
	if err != nil {
		return refuse(refusal.CauseBadRequest, refusal.WhyMalformedTarget, early)
	}
	rec.host, rec.port = t.host, t.port
	if ok, why := po.Allows(t.host, t.port); !ok {
		return refuse(refusal.CauseHostNotAllowed, why, early)
	}
	spelled, ok := targetAsSpelled(head.target)
	if !ok {
		return refuse(refusal.CauseBadRequest, refusal.WhyMalformedTarget, early)
	}
	hosts := head.values("host")
	if len(hosts) == 0 && head.minor == 1 {
		return refuse(refusal.CauseBadRequest, refusal.WhyNoHostHeader, early)
	}
	if why := hostMismatch(hosts, t.host, t.port, defaultPort(t.scheme)); why != "" {
		return refuse(refusal.CauseMisdirected, why, early)
	}
	if isEchoMethod(head.method) {
		return refuse(refusal.CauseMethodRefused, refusal.MethodRefused(head.method), true)
	}

	path, query, _ := strings.Cut(spelled, "?")
	req := &ask.Request{Kind: ask.KindHTTP, Method: head.method, Host: t.host, Port: t.port, Path: path, Query: query}
	req.Headers, req.HeaderNames = orderedAskHeaders(head)
	if len(hosts) == 1 {
		req.HostHeader = hosts[0]
	}
	rec.about(req)
	if why := unaskable(req); why != "" {
		return refuse(refusal.CauseUnaskable, why, true)
	}
	rb := h.requestBody(head, kind, length)
	body := newPeekBody(head.method, rb, length, h.c.raw)
	req.Body = body

	ctx, cancel := h.requestContext()
	defer cancel()
	v, err := h.s.Asker.Ask(ctx, req)
	if err != nil {
		return h.askFailed(rec, req, body, err, true)
	}
	if !v.Allow {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindHTTP, Status: v.Status, Reason: v.Reason, Host: t.host}, true)
	}
	if !h.s.Rules.PlaintextHeaderSet && setsHeaders(v) {
		return refuse(refusal.CausePlaintextHeaderSet, refusal.WhyPlaintextHeaderSet, true)
	}
	return h.forwardProxyOnly(rec, head, t, spelled, v, req, body, kind, wantsClose)
}

// orderedAskHeaders is the header map the decider sees, with its names in
// order of first arrival: every field but Host (there is no proxy
// authentication to consume a Proxy-Authorization).
func orderedAskHeaders(h *requestHead) (map[string][]string, []string) {
	var m map[string][]string
	var names []string
	for _, f := range h.fields {
		if f.lower == "host" {
			continue
		}
		if m == nil {
			m = make(map[string][]string, len(h.fields))
		}
		if _, seen := m[f.lower]; !seen {
			names = append(names, f.lower)
		}
		m[f.lower] = append(m[f.lower], f.value)
	}
	return m, names
}

// setsHeaders reports whether an allow sets a header value (a credential
// placed included); a name given no values only removes.
func setsHeaders(v ask.Verdict) bool {
	for _, values := range v.SetHeaders {
		if len(values) > 0 {
			return true
		}
	}
	return false
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}
