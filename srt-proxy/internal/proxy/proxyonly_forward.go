package proxy

import (
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// forwardProxyOnly sends an allowed plain-HTTP request upstream with its
// request-target as spelled and relays the response; it reports whether
// the connection may carry another request.
func (h *httpConn) forwardProxyOnly(rec *record, head *requestHead, t absTarget, spelled string, v Verdict, req *Request, body *peekBody, wantsClose bool) bool {
	ctx, cancel := h.requestContext()
	defer cancel()
	out := proxyOnlyOutbound(head, t, spelled, v, body)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { rec.addr = remoteAddr(info.Conn) }}
	out = out.WithContext(httptrace.WithClientTrace(ctx, trace))
	resp, err := h.s.transport.RoundTrip(out)
	if err != nil {
		complete := true
		if body.rb != nil {
			if cerr := body.rb.clientErr(); cerr != nil {
				rec.set(decisionFail, "reading the request body: "+cerr.Error())
				h.s.log(rec)
				return false
			}
			complete = body.rb.finish()
		}
		return h.upstreamFailed(rec, req, err, wantsClose || !complete)
	}
	rec.set(decisionAllow, v.Reason)
	keep := h.relay(head, resp, rec, wantsClose)
	if body.rb != nil {
		keep = body.rb.finish() && keep
		rec.up = body.rb.n.Load()
	}
	h.s.log(rec)
	return keep
}

// proxyOnlyOutbound builds the request sent upstream: the target as
// spelled, Host rebuilt from the canonical host, the client's headers
// without the hop-by-hop ones (any spelling) and without Proxy-Authorization,
// the verdict's edits applied, the body (what the decider read of it
// first) re-framed.
func proxyOnlyOutbound(head *requestHead, t absTarget, spelled string, v Verdict, body *peekBody) *http.Request {
	hdr := make(http.Header, len(head.fields)+1)
	named := map[string]bool{}
	for tok := range connectionTokens(head.values("connection")) {
		named[foldName(tok)] = true
	}
	for _, f := range head.fields {
		if dropProxyOnly(foldName(f.lower), named) {
			continue
		}
		k := textproto.CanonicalMIMEHeaderKey(f.name)
		hdr[k] = append(hdr[k], f.value)
	}
	applyEdits(hdr, v)
	if _, ok := hdr["User-Agent"]; !ok {
		hdr["User-Agent"] = []string{""} // keeps net/http from adding its own
	}
	path, query, hasQuery := strings.Cut(spelled, "?")
	out := &http.Request{
		Method: head.method,
		// Opaque is sent as the request-target verbatim: no re-escaping.
		URL: &url.URL{Scheme: t.scheme, Host: net.JoinHostPort(t.host, strconv.Itoa(t.port)),
			Opaque: path, RawQuery: query, ForceQuery: hasQuery && query == ""},
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Host:       hostAuthority(t.scheme, t.host, t.port),
	}
	if body.rb != nil {
		out.Body, out.ContentLength = body.forward(), body.length
	}
	return out
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
