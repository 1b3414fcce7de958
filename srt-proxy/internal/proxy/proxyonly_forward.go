package proxy

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// forwardProxyOnly sends an allowed plain-HTTP request upstream with its
// request-target as spelled, Host rebuilt from the canonical host, the
// client's headers without the hop-by-hop ones (any spelling) and without
// Proxy-Authorization, the verdict's edits applied and the body (what the
// decider read of it first) re-framed, and relays the response; it
// reports whether the connection may carry another request.
func (h *httpConn) forwardProxyOnly(rec *serve.Record, head *http1.RequestHead, t http1.AbsTarget, spelled string, v ask.Verdict, req *ask.Request, body *peekBody, kind http1.BodyKind, wantsClose bool) bool {
	ctx, cancel := h.requestContext()
	defer cancel()
	ex := &exchange{head: head, req: req, verdict: v, scheme: t.Scheme, target: spelled,
		hostHeader: http1.HostAuthority(t.Scheme, t.Host, t.Port), kind: kind, length: body.length,
		wantsClose: wantsClose, proxyOnly: true, rec: rec, rb: body.rb, body: body}
	keep := h.forward(ctx, ex, pooledUpstream{h})
	h.s.log(rec)
	return keep
}
