package http1

import "strings"

// hopScope says in which direction a hop-by-hop header is dropped.
type hopScope uint8

const (
	hopRequest  hopScope = 1 << iota // dropped from requests before they go upstream
	hopResponse                      // dropped from responses before they reach the client
	hopBoth     = hopRequest | hopResponse
)

// hopByHop lists the header fields that describe one connection, not the
// message, so a proxy does not forward them (RFC 9110 §7.6.1), keyed by
// lower-case name. The fields a Connection header names are dropped too.
// Content-Length is not listed: the proxy re-frames every body and writes
// its own.
var hopByHop = map[string]hopScope{
	"connection":        hopBoth, // RFC 9110 §7.6.1
	"proxy-connection":  hopBoth, // pre-standard Connection of old clients (RFC 9112 Appendix C.2.2)
	"keep-alive":        hopBoth, // RFC 9110 §7.6.1 (RFC 2068 §19.7.1)
	"te":                hopBoth, // RFC 9110 §10.1.4: transfer codings the next hop accepts
	"trailer":           hopBoth, // RFC 9110 §6.6.2; trailers are dropped, so their announcement goes too
	"transfer-encoding": hopBoth, // RFC 9112 §6.1: framing is per hop; the proxy re-frames
	"upgrade":           hopBoth, // RFC 9110 §7.8: the proxy does not switch protocols on a plain-HTTP request
	// Proxy-Authorization is dropped from a request only when it carried
	// this proxy's own token (RFC 9110 §11.7.2: consumed by the proxy that
	// asked for it); see DropRequestHeader.
	"proxy-authorization": 0,
	"proxy-authenticate":  hopResponse, // RFC 9110 §11.7.1: meant for the next outbound client, not ours
}

// ConnectionTokens returns the field names the Connection header values
// list, lower-case and also folded (FoldName), as header names are
// matched.
func ConnectionTokens(values []string) map[string]bool {
	if len(values) == 0 {
		return nil
	}
	m := make(map[string]bool)
	for _, v := range values {
		for _, tok := range strings.Split(v, ",") {
			if tok = strings.ToLower(strings.TrimSpace(tok)); tok != "" {
				m[tok] = true
				m[FoldName(tok)] = true
			}
		}
	}
	return m
}

// DropRequestHeader reports whether a request header (lower-case name) is
// not forwarded upstream. host and content-length are rebuilt by the
// proxy; authConsumed says the Proxy-Authorization carried our token.
func DropRequestHeader(name string, named map[string]bool, authConsumed bool) bool {
	switch {
	case name == "host" || name == "content-length":
		return true
	case name == "proxy-authorization":
		return authConsumed || named[name]
	}
	return hopByHop[name]&hopRequest != 0 || named[name]
}

// DropResponseHeader reports whether a response header (lower-case name)
// is not relayed to the client.
func DropResponseHeader(name string, named map[string]bool) bool {
	return name == "content-length" || hopByHop[name]&hopResponse != 0 || named[name]
}

// DropProxyOnly reports whether a request header (its folded name) stays
// behind in proxy-only mode: the ones the proxy rebuilds (Host,
// Content-Length), every hop-by-hop header of either direction,
// Proxy-Authorization (this proxy takes no credentials, and the next hop
// is the origin), and those the Connection header names.
func DropProxyOnly(folded string, named map[string]bool) bool {
	if folded == "host" || folded == "content-length" || named[folded] {
		return true
	}
	_, hop := hopByHop[folded]
	return hop
}
