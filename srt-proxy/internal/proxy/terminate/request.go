package terminate

import (
	"time"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// serveOne reads one request inside the tunnel, checks it, asks the
// decider and forwards it. It reports whether the tunnel may carry another
// request. Refusals are answered inside the tunnel (Kind KindHTTP) and
// keep it open unless a request body is left unread.
//
//	head ─▶ framing ─▶ target form ─▶ Host count ─▶ requireHostMatch 421 ─▶ TRACE/TRACK 405
//	     ─▶ ambiguousRequestTarget ─▶ protocol limits 400 ─▶ Ask ─▶ deny: verdict's status
//	     ─▶ allow: header edits ─▶ upstream (kept alive) ─▶ response (stripped, Keep-Alive)
func (x *tlsSession) serveOne() bool {
	h := x.h
	h.BeginRequest()
	rec := serve.NewRecord("https")
	rec.Host, rec.Port, rec.User = x.connect.Host, x.connect.Port, x.connect.User
	head := h.NextHead(rec)
	if head == nil {
		return false
	}
	x.tc.SetReadDeadline(time.Time{})
	kind, length, err := http1.Framing(head)
	if err != nil {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.Minor == 0 || http1.ConnectionTokens(head.Values("connection"))["close"]
	refuseClose := wantsClose || kind != http1.BodyNone
	refuse := func(c refusal.Cause, why string) bool {
		return h.Refuse(rec, refusal.Refusal{Cause: c, Kind: ask.KindHTTP, Reason: why, Host: x.connect.Host}, refuseClose)
	}

	rt, err := http1.ParseInnerTarget(head.Method, head.Target)
	if err != nil {
		return refuse(refusal.CauseMalformed, err.Error())
	}
	hosts := head.Values("host")
	if why := x.misdirected(hosts, rt); why != "" {
		return refuse(refusal.CauseMisdirected, why)
	}
	if len(hosts) > 1 {
		return refuse(refusal.CauseUnaskable, refusal.WhyTwoHosts)
	}
	hostHeader := ""
	if len(hosts) == 1 {
		hostHeader = hosts[0]
	}
	// RFC 9110 §9.3.8: TRACE echoes the request, credentials the proxy
	// added included; TRACK is its old twin.
	if http1.IsEchoMethod(head.Method) {
		return refuse(refusal.CauseMethodRefused, refusal.MethodRefused(head.Method))
	}
	path, ok := x.env.Rules.AmbiguousTarget.Resolve(rt.Path)
	if !ok {
		return refuse(refusal.CauseAmbiguousTarget, refusal.WhyAmbiguous)
	}
	upTarget := rt.With(path)
	req := &ask.Request{Kind: ask.KindHTTP, User: x.connect.User, Method: head.Method, Host: x.connect.Host, Port: x.connect.Port,
		HostHeader: hostHeader, SNI: x.sni, Path: path, Query: rt.Query}
	req.Headers, req.HeaderNames = http1.OrderedAskHeaders(head)
	if why := http1.Unaskable(req); why != "" {
		return refuse(refusal.CauseUnaskable, why)
	}
	// The body is read only if the decider asks to see it (need_body),
	// and then kept and forwarded first.
	rb := h.RequestBody(head, kind, length)
	body := forward.NewPeekBody(head.Method, rb, length, x.tc)
	req.Body = body

	ctx, cancel := h.RequestContext()
	defer cancel()
	v, err := x.env.Asker.Ask(ctx, req)
	if err != nil {
		return h.AskFailed(rec, req, body, err, refuseClose)
	}
	if !v.Allow {
		return h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseRequestDenied, Kind: ask.KindHTTP, Status: v.Status, Reason: v.Reason, Host: req.Host}, refuseClose)
	}
	if hostHeader == "" {
		hostHeader = http1.HostAuthority("https", req.Host, req.Port)
	}
	ex := &forward.Exchange{Head: head, Req: req, Verdict: v, Scheme: "https", Target: upTarget, HostHeader: hostHeader,
		Kind: kind, Length: length, WantsClose: wantsClose, Rec: rec, RB: rb, Body: body, Inject: true}
	keep := h.Forward(ctx, ex, tunnelUpstream{x})
	x.up += rec.Up
	x.down += rec.Down
	x.env.Log(rec)
	return keep
}

// misdirected returns why a request does not name the CONNECT target
// under RequireHostMatch, or "": its Host header (one, naming the target),
// its TLS server name, its absolute-form authority.
func (x *tlsSession) misdirected(hosts []string, rt http1.InnerTarget) string {
	if !x.env.Rules.RequireHostMatch {
		return ""
	}
	host, port := x.connect.Host, x.connect.Port
	if why := x.env.Rules.HostMismatch(hosts, 443, host, port); why != "" {
		return why
	}
	if c, err := hostname.Canonical(x.sni); x.sni != "" && (err != nil || c != host) {
		return refusal.WhySNIMismatch
	}
	if rt.Authority != "" && !http1.NamesTarget(rt.Authority, http1.DefaultPort(rt.Scheme), host, port) {
		return refusal.WhyAuthMismatch
	}
	return ""
}
