package proxyonly

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// absoluteFormProblem says why proxy-only mode does not forward a
// request-target as it stands, before its host is parsed, or "": not the
// absolute form (origin form, "*", another scheme), a user named in the
// authority, or a host not spelled in plain ASCII (asciiAuthority).
func absoluteFormProblem(target string) string {
	switch {
	case target == "*":
		return refusal.WhyAsteriskForm
	case strings.HasPrefix(target, "/"):
		return refusal.WhyOriginForm
	}
	rest, ok := cutSchemeFold(target)
	if !ok {
		return refusal.WhyNotHTTPURL
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if strings.Contains(rest, "@") {
		return refusal.WhyUserinfo
	}
	if !asciiAuthority(target) {
		return refusal.WhyNotASCII
	}
	return ""
}

// asciiAuthority reports whether an absolute-form request-target names
// its host in plain ASCII (§2.2): "http://" or "https://" (any case), then
// an IPv6 literal in brackets, or a host without '/', '?', '#', ':', '@',
// '[' or ']' that is an IPv4 address or dot-separated labels of letters,
// digits and '-' (one trailing dot at most); then an optional ":digits";
// then '/', '?' or the end. Userinfo, an empty host and an empty port are
// refused with it.
func asciiAuthority(target string) bool {
	rest, ok := cutSchemeFold(target)
	if !ok {
		return false
	}
	var host string
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return false
		}
		host, rest = rest[:end+1], rest[end+1:]
	} else {
		end := strings.IndexAny(rest, "/?#:@[]")
		if end < 0 {
			end = len(rest)
		}
		host, rest = rest[:end], rest[end:]
	}
	if after, ok := strings.CutPrefix(rest, ":"); ok {
		n := 0
		for n < len(after) && after[n] >= '0' && after[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		rest = after[n:]
	}
	if rest != "" && rest[0] != '/' && rest[0] != '?' {
		return false
	}
	return asciiHost(host)
}

// asciiHost reports whether a request-target's host is an IPv6 literal in
// brackets (without a zone), an IPv4 address or plain-ASCII labels
// (asciiName).
func asciiHost(host string) bool {
	if inner, ok := strings.CutPrefix(host, "["); ok {
		a, err := netip.ParseAddr(strings.TrimSuffix(inner, "]"))
		return err == nil && a.Is6() && a.Zone() == ""
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return true
	}
	return asciiName(host)
}

// cutSchemeFold removes "http://" or "https://", in any case.
func cutSchemeFold(s string) (string, bool) {
	for _, p := range []string{"http://", "https://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return "", false
}

// asciiName reports whether s is labels of [A-Za-z0-9-], joined by dots,
// with one trailing dot at most.
func asciiName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// targetAsSpelled is the path and query of an absolute-form
// request-target exactly as the client spelled them, which the decider
// sees and the upstream is sent: dot segments and percent-escapes are
// kept, so an unusual spelling of an allowed path is simply another path.
// An empty path reads "/". It is refused (ok false) when it starts with
// "//" or "/\", or holds a '#', a space, a control byte or DEL.
func targetAsSpelled(target string) (string, bool) {
	rest, ok := cutSchemeFold(target)
	if !ok {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		return "/", true
	}
	t := rest[end:]
	if t[0] == '?' {
		t = "/" + t
	}
	if t[0] != '/' || strings.HasPrefix(t, "//") || strings.HasPrefix(t, `/\`) {
		return "", false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c == 0x7f || c == '#' {
			return "", false
		}
	}
	return t, true
}

// hostMismatch says why the Host headers of a request do not name its
// target (host canonical, port, the scheme's default port), or "": no Host
// header names nothing (the caller requires one of HTTP/1.1), more than
// one is a mismatch, and one must be the target's host in any case, with
// the target's port after one colon or no port when the port is the
// default, brackets only around an IPv6 address.
func hostMismatch(hosts []string, host string, port, defaultPort int) string {
	switch len(hosts) {
	case 0:
		return ""
	case 1:
	default:
		return refusal.WhyTwoHosts
	}
	h, p, ok := hostHeaderParts(hosts[0])
	if !ok || !strings.EqualFold(h, host) {
		return refusal.WhyHostMismatch
	}
	if p == "" {
		if port != defaultPort {
			return refusal.WhyHostMismatch
		}
		return ""
	}
	if p != strconv.Itoa(port) {
		return refusal.WhyHostMismatch
	}
	return ""
}

// hostHeaderParts splits a Host header into its host and port ("" when
// none); ok is false for any other shape (brackets around a name, an empty
// or bracketed port).
func hostHeaderParts(v string) (host, port string, ok bool) {
	rest := ""
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest = v[1:end], v[end+1:]
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return "", "", false
		}
	} else {
		host = v
		if i := strings.IndexByte(v, ':'); i >= 0 {
			host, rest = v[:i], v[i:]
		}
		if strings.ContainsAny(host, "[]") {
			return "", "", false
		}
	}
	if rest == "" {
		return host, "", true
	}
	port = rest[1:]
	if rest[0] != ':' || port == "" || strings.ContainsAny(port, "[]:") {
		return "", "", false
	}
	return host, port, true
}
