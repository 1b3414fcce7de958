package proxyonly

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// forwardRequest sends an allowed plain-HTTP request upstream with its
// request-target as spelled, Host rebuilt from the canonical host, the
// client's headers without the hop-by-hop ones (any spelling) and without
// Proxy-Authorization, the verdict's edits applied and the body (what the
// decider read of it first) re-framed, and relays the response; it
// reports whether the connection may carry another request.
func (m mode) forwardRequest(h *forward.Conn, rec *serve.Record, head *http1.RequestHead, t http1.AbsTarget, spelled string, v ask.Verdict, req *ask.Request, body *forward.PeekBody, kind http1.BodyKind, wantsClose bool) bool {
	ctx, cancel := h.RequestContext()
	defer cancel()
	ex := &forward.Exchange{Head: head, Req: req, Verdict: v, Scheme: t.Scheme, Target: spelled,
		HostHeader: http1.HostAuthority(t.Scheme, t.Host, t.Port), Kind: kind, Length: body.Length,
		WantsClose: wantsClose, ProxyOnly: true, Rec: rec, RB: body.RB, Body: body, Inject: m.Rules.PlaintextInject}
	keep := h.Forward(ctx, ex, h.Pooled())
	m.Log(rec)
	return keep
}
