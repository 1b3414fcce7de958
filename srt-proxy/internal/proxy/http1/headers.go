package http1

import (
	"strings"
)

// FoldName folds a header name for edit matching: lower case, '_' and '.'
// as '-'.
func FoldName(n string) string {
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

func ExpectsContinue(h *RequestHead) bool {
	for _, v := range h.Values("expect") {
		if strings.EqualFold(v, "100-continue") {
			return true
		}
	}
	return false
}

// AskHeaders is the header map the decider sees: lower-case names, values
// in arrival order, without host and without the Proxy-Authorization the
// proxy consumed.
func AskHeaders(h *RequestHead, consumed bool) map[string][]string {
	var m map[string][]string
	for _, f := range h.Fields {
		if f.Lower == "host" || consumed && f.Lower == "proxy-authorization" {
			continue
		}
		if m == nil {
			m = make(map[string][]string, len(h.Fields))
		}
		m[f.Lower] = append(m[f.Lower], f.Value)
	}
	return m
}

// OrderedAskHeaders is the header map the decider sees, with its names in
// order of first arrival: every field but Host (there is no proxy
// authentication to consume a Proxy-Authorization).
func OrderedAskHeaders(h *RequestHead) (map[string][]string, []string) {
	var m map[string][]string
	var names []string
	for _, f := range h.Fields {
		if f.Lower == "host" {
			continue
		}
		if m == nil {
			m = make(map[string][]string, len(h.Fields))
		}
		if _, seen := m[f.Lower]; !seen {
			names = append(names, f.Lower)
		}
		m[f.Lower] = append(m[f.Lower], f.Value)
	}
	return m, names
}

func DefaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// IsEchoMethod reports whether a method asks the server to echo the
// request (TRACE, and TRACK, which some servers treat the same): echoed, a
// credential the proxy placed would reach the client.
func IsEchoMethod(m string) bool {
	return strings.EqualFold(m, "TRACE") || strings.EqualFold(m, "TRACK")
}

// IsBodylessMethod reports whether a method normally has no body, so the
// decider is shown none.
func IsBodylessMethod(m string) bool {
	return m == "GET" || m == "HEAD" || m == "OPTIONS"
}
