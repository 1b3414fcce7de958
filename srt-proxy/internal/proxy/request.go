package proxy

import (
	"net/url"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// serveRequest serves one plain-HTTP (absolute-form) request: authenticate,
// ask, forward, relay the response. It reports whether the connection may
// carry another request.
func (s *Server) serveRequest(h *forward.Conn, head *http1.RequestHead, rec *serve.Record) bool {
	kind, length, err := http1.Framing(head)
	if err != nil {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.Minor == 0 || http1.ConnectionTokens(head.Values("connection"))["close"]
	// A refusal keeps the connection only if no request body is left unread.
	refuseClose := wantsClose || kind != http1.BodyNone

	user, consumed, ok := s.authenticate(head)
	if !ok {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindHTTP}, refuseClose)
	}
	rec.User = user
	t, err := http1.ParseAbsoluteTarget(head.Target)
	if err != nil {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, refuseClose)
	}
	req := &ask.Request{Kind: ask.KindHTTP, User: user, Method: head.Method, Host: t.Host, Port: t.Port,
		Path: t.Path, Query: t.Query, Headers: http1.AskHeaders(head, consumed)}
	rec.About(req)
	if c, why := s.plainRules(head, &t); c != 0 {
		return h.Refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: t.Host}, refuseClose)
	}
	req.Path = t.Path
	switch hosts := head.Values("host"); len(hosts) {
	case 0:
	case 1:
		req.HostHeader = hosts[0]
	default:
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseUnaskable, Kind: ask.KindHTTP, Reason: refusal.WhyTwoHosts}, refuseClose)
	}
	if why := http1.Unaskable(req); why != "" {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseUnaskable, Kind: ask.KindHTTP, Reason: why}, refuseClose)
	}

	ctx, cancel := h.RequestContext()
	defer cancel()
	v, err := s.Asker.Ask(ctx, req)
	if err != nil {
		return h.AskFailed(rec, req, nil, err, refuseClose)
	}
	if !v.Allow {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindHTTP, Status: v.Status, Reason: v.Reason, Host: req.Host}, refuseClose)
	}
	if !s.Rules.PlaintextHeaderSet && v.SetsHeaders() {
		s.Asker.Refused(req, refusal.WhyPlaintextHeaderSet)
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CausePlaintextHeaderSet, Kind: ask.KindHTTP, Reason: refusal.WhyPlaintextHeaderSet, Host: req.Host}, refuseClose)
	}

	// The path goes upstream as spelled; one whose %-escapes do not
	// decode is malformed.
	if _, err := url.PathUnescape(t.Path); err != nil {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: http1.Malformed("request-target path encoding").Error()}, refuseClose)
	}
	body := h.RequestBody(head, kind, length)
	target := t.Path
	if t.Query != "" {
		target += "?" + t.Query
	}
	ex := &forward.Exchange{Head: head, Req: req, Verdict: v, Scheme: t.Scheme, Target: target,
		HostHeader: http1.HostAuthority(t.Scheme, t.Host, t.Port), Kind: kind, Length: length,
		WantsClose: wantsClose, AuthConsumed: consumed, Rec: rec, RB: body, Inject: s.Rules.PlaintextInject}
	keep := h.Forward(ctx, ex, h.Pooled())
	s.log(rec)
	return keep
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
