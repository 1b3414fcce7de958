package proxy

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// forwardProxyOnly sends an allowed plain-HTTP request upstream with its
// request-target as spelled, Host rebuilt from the canonical host, the
// client's headers without the hop-by-hop ones (any spelling) and without
// Proxy-Authorization, the verdict's edits applied and the body (what the
// decider read of it first) re-framed, and relays the response; it
// reports whether the connection may carry another request.
func (h *httpConn) forwardProxyOnly(rec *record, head *requestHead, t absTarget, spelled string, v ask.Verdict, req *ask.Request, body *peekBody, kind bodyKind, wantsClose bool) bool {
	ctx, cancel := h.requestContext()
	defer cancel()
	ex := &exchange{head: head, req: req, verdict: v, scheme: t.scheme, target: spelled,
		hostHeader: hostAuthority(t.scheme, t.host, t.port), kind: kind, length: body.length,
		wantsClose: wantsClose, proxyOnly: true, rec: rec, rb: body.rb, body: body}
	keep := h.forward(ctx, ex, pooledUpstream{h})
	h.s.log(rec)
	return keep
}

// dropProxyOnly reports whether a request header (its folded name) stays
// behind in proxy-only mode: the ones the proxy rebuilds (Host,
// Content-Length), every hop-by-hop header of either direction,
// Proxy-Authorization (this proxy takes no credentials, and the next hop
// is the origin), and those the Connection header names.
func dropProxyOnly(folded string, named map[string]bool) bool {
	if folded == "host" || folded == "content-length" || named[folded] {
		return true
	}
	_, hop := hopByHop[folded]
	return hop
}
