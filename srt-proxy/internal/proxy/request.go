package proxy

import (
	"errors"
	"net/url"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// serveRequest serves one plain-HTTP (absolute-form) request: authenticate,
// ask, forward, relay the response. It reports whether the connection may
// carry another request.
func (h *httpConn) serveRequest(head *requestHead, rec *record) bool {
	kind, length, err := framing(head)
	if err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.minor == 0 || connectionTokens(head.values("connection"))["close"]
	// A refusal keeps the connection only if no request body is left unread.
	refuseClose := wantsClose || kind != bodyNone

	user, consumed, ok := h.s.authenticate(head)
	if !ok {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindHTTP}, refuseClose)
	}
	rec.user = user
	t, err := parseAbsoluteTarget(head.target)
	if err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, refuseClose)
	}
	req := &ask.Request{Kind: ask.KindHTTP, User: user, Method: head.method, Host: t.host, Port: t.port,
		Path: t.path, Query: t.query, Headers: askHeaders(head, consumed)}
	rec.about(req)
	if c, why := h.s.plainRules(head, &t); c != 0 {
		return h.refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: t.host}, refuseClose)
	}
	req.Path = t.path
	switch hosts := head.values("host"); len(hosts) {
	case 0:
	case 1:
		req.HostHeader = hosts[0]
	default:
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseUnaskable, Kind: ask.KindHTTP, Reason: refusal.WhyTwoHosts}, refuseClose)
	}
	if why := unaskable(req); why != "" {
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
	if _, err := url.PathUnescape(t.path); err != nil {
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: malformed("request-target path encoding").Error()}, refuseClose)
	}
	body := h.requestBody(head, kind, length)
	target := t.path
	if t.query != "" {
		target += "?" + t.query
	}
	ex := &exchange{head: head, req: req, verdict: v, scheme: t.scheme, target: target,
		hostHeader: hostAuthority(t.scheme, t.host, t.port), kind: kind, length: length,
		wantsClose: wantsClose, authConsumed: consumed, rec: rec, rb: body}
	keep := h.forward(ctx, ex, pooledUpstream{h})
	h.s.log(rec)
	return keep
}

// upstreamFailed answers a request whose upstream leg failed after an
// allow, and tells the decider.
func (h *httpConn) upstreamFailed(rec *record, req *ask.Request, err error, close bool) bool {
	var refused *dial.AddressRefusedError
	if errors.As(err, &refused) {
		h.s.Asker.Refused(req, refused.Reason)
		return h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAddress, Kind: req.Kind, Reason: refused.Reason, Host: req.Host}, close)
	}
	why := unreachableReason(err)
	h.s.Asker.Refused(req, why)
	f, text := upstreamFailure(err, req.Host, req.Port, h.trustFix)
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

// askHeaders is the header map the decider sees: lower-case names, values
// in arrival order, without host and without the Proxy-Authorization the
// proxy consumed.
func askHeaders(h *requestHead, consumed bool) map[string][]string {
	var m map[string][]string
	for _, f := range h.fields {
		if f.lower == "host" || consumed && f.lower == "proxy-authorization" {
			continue
		}
		if m == nil {
			m = make(map[string][]string, len(h.fields))
		}
		m[f.lower] = append(m[f.lower], f.value)
	}
	return m
}

// foldName folds a header name for edit matching: lower case, '_' and '.'
// as '-'.
func foldName(n string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '_' || r == '.':
			return '-'
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, n)
}

func expectsContinue(h *requestHead) bool {
	for _, v := range h.values("expect") {
		if strings.EqualFold(v, "100-continue") {
			return true
		}
	}
	return false
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
