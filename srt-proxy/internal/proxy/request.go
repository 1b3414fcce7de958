package proxy

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
)

// serveRequest serves one plain-HTTP (absolute-form) request: authenticate,
// ask, forward, relay the response. It reports whether the connection may
// carry another request.
func (h *httpConn) serveRequest(head *requestHead, rec *record) bool {
	kind, length, err := framing(head)
	if err != nil {
		return h.refuse(rec, Refusal{Cause: CauseMalformed, Kind: KindHTTP, Reason: err.Error()}, true)
	}
	wantsClose := head.minor == 0 || connectionTokens(head.values("connection"))["close"]
	// A refusal keeps the connection only if no request body is left unread.
	refuseClose := wantsClose || kind != bodyNone

	user, consumed, ok := h.s.authenticate(head)
	if !ok {
		return h.refuse(rec, Refusal{Cause: CauseAuth, Kind: KindHTTP}, refuseClose)
	}
	rec.user = user
	t, err := parseAbsoluteTarget(head.target)
	if err != nil {
		return h.refuse(rec, Refusal{Cause: CauseMalformed, Kind: KindHTTP, Reason: err.Error()}, refuseClose)
	}
	req := &Request{Kind: KindHTTP, User: user, Method: head.method, Host: t.host, Port: t.port,
		Path: t.path, Query: t.query, Headers: askHeaders(head, consumed)}
	rec.about(req)
	if c, why := h.s.plainRules(head, &t); c != 0 {
		return h.refuse(rec, Refusal{Cause: c, Kind: KindHTTP, Reason: why, Host: t.host}, refuseClose)
	}
	req.Path = t.path
	switch hosts := head.values("host"); len(hosts) {
	case 0:
	case 1:
		req.HostHeader = hosts[0]
	default:
		return h.refuse(rec, Refusal{Cause: CauseUnaskable, Kind: KindHTTP, Reason: whyTwoHosts}, refuseClose)
	}
	if why := unaskable(req); why != "" {
		return h.refuse(rec, Refusal{Cause: CauseUnaskable, Kind: KindHTTP, Reason: why}, refuseClose)
	}

	ctx, cancel := h.requestContext()
	defer cancel()
	v, err := h.s.Asker.Ask(ctx, req)
	if err != nil {
		return h.refuse(rec, Refusal{Cause: CauseUnavailable, Kind: KindHTTP, Reason: deciderReason(err.Error())}, refuseClose)
	}
	if !v.Allow {
		return h.refuse(rec, Refusal{Cause: CauseDenied, Kind: KindHTTP, Status: v.Status, Reason: v.Reason, Host: req.Host}, refuseClose)
	}
	if !h.s.Rules.PlaintextHeaderSet && setsHeaders(v) {
		h.s.Asker.Refused(req, whyPlaintextHeaderSet)
		return h.refuse(rec, Refusal{Cause: CausePlaintextHeaderSet, Kind: KindHTTP, Reason: whyPlaintextHeaderSet, Host: req.Host}, refuseClose)
	}

	out, body, err := h.outbound(head, t, v, kind, length, consumed)
	if err != nil {
		return h.refuse(rec, Refusal{Cause: CauseMalformed, Kind: KindHTTP, Reason: err.Error()}, refuseClose)
	}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { rec.addr = remoteAddr(info.Conn) }}
	out = out.WithContext(httptrace.WithClientTrace(ctx, trace))
	resp, err := h.s.transport.RoundTrip(out)
	if err != nil {
		complete := true
		if body != nil {
			if cerr := body.clientErr(); cerr != nil {
				rec.set(decisionFail, "reading the request body: "+cerr.Error())
				h.s.log(rec)
				return false
			}
			complete = body.finish()
		}
		return h.upstreamFailed(rec, req, err, wantsClose || !complete)
	}
	rec.set(decisionAllow, v.Reason)
	keep := h.relay(head, resp, rec, wantsClose)
	if body != nil {
		keep = body.finish() && keep
		rec.up = body.n.Load()
	}
	h.s.log(rec)
	return keep
}

// upstreamFailed answers a request whose upstream leg failed after an
// allow, and tells the decider.
func (h *httpConn) upstreamFailed(rec *record, req *Request, err error, close bool) bool {
	var refused *dial.AddressRefusedError
	if errors.As(err, &refused) {
		h.s.Asker.Refused(req, refused.Reason)
		return h.refuse(rec, Refusal{Cause: CauseAddress, Kind: req.Kind, Reason: refused.Reason, Host: req.Host}, close)
	}
	why := unreachableReason(err)
	h.s.Asker.Refused(req, why)
	return h.refuse(rec, Refusal{Cause: CauseUnreachable, Kind: req.Kind, Reason: why, Host: req.Host}, close)
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

// outbound builds the request sent upstream: the target's path and query,
// Host rebuilt from the canonical host, the client's headers without the
// hop-by-hop ones, the verdict's edits applied, the body re-framed.
func (h *httpConn) outbound(head *requestHead, t absTarget, v Verdict, kind bodyKind, length int64, consumed bool) (*http.Request, *reqBody, error) {
	path, err := url.PathUnescape(t.path)
	if err != nil {
		return nil, nil, malformed("request-target path encoding")
	}
	hdr := make(http.Header, len(head.fields)+1)
	named := connectionTokens(head.values("connection"))
	for _, f := range head.fields {
		if dropRequestHeader(f.lower, named, consumed) {
			continue
		}
		k := textproto.CanonicalMIMEHeaderKey(f.name)
		hdr[k] = append(hdr[k], f.value)
	}
	applyEdits(hdr, v)
	if _, ok := hdr["User-Agent"]; !ok {
		hdr["User-Agent"] = []string{""} // keeps net/http from adding its own
	}
	out := &http.Request{
		Method:     head.method,
		URL:        &url.URL{Scheme: t.scheme, Host: net.JoinHostPort(t.host, strconv.Itoa(t.port)), Path: path, RawPath: t.path, RawQuery: t.query},
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Host:       hostAuthority(t.scheme, t.host, t.port),
	}
	if kind == bodyNone {
		return out, nil, nil
	}
	var onFirst func()
	if head.minor == 1 && expectsContinue(head) {
		onFirst = h.sendContinue
	}
	body := newReqBody(kind, length, h.br, onFirst)
	out.Body, out.ContentLength = body, length
	return out, body, nil
}

// applyEdits applies an allow verdict's header edits: every header whose
// folded name is removed or set goes, then the set values are added.
func applyEdits(hdr http.Header, v Verdict) {
	if len(v.SetHeaders) == 0 && len(v.RemoveHeaders) == 0 {
		return
	}
	drop := make(map[string]bool, len(v.SetHeaders)+len(v.RemoveHeaders))
	for _, n := range v.RemoveHeaders {
		drop[foldName(n)] = true
	}
	for n := range v.SetHeaders {
		drop[foldName(n)] = true
	}
	for k := range hdr {
		if drop[foldName(k)] {
			delete(hdr, k)
		}
	}
	for n, values := range v.SetHeaders {
		k := textproto.CanonicalMIMEHeaderKey(n)
		hdr[k] = append(hdr[k], values...)
	}
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
