package http1

import (
	"strings"

	"github.com/srt-sandbox/decider/hostname"
)

// InnerTarget is the request-target of a request read inside a terminated
// tunnel: origin-form ("/p?q"), absolute-form ("https://a/p?q") or
// asterisk-form ("*", OPTIONS only) (RFC 9112 §3.2). A fragment is cut in
// every form.
type InnerTarget struct {
	prefix    string // "scheme://authority" of absolute-form, else ""
	Scheme    string // absolute-form only, lower case
	Authority string // absolute-form only, as spelled
	Path      string // as spelled; "/" for an absolute-form target without one; "*" for asterisk-form
	Query     string // after the first '?'
	hasQuery  bool
}

// Spelled is the target as forwarded in asSpelled mode: as the client
// wrote it, less the fragment.
func (t InnerTarget) Spelled() string { return t.With(t.Path) }

// With is the target with path replaced.
func (t InnerTarget) With(path string) string {
	s := t.prefix + path
	if t.hasQuery {
		s += "?" + t.Query
	}
	return s
}

// ParseInnerTarget parses a request-target read inside a terminated
// tunnel. Anything but the three forms (authority-form included), a scheme
// other than http or https, and userinfo in an authority are malformed.
// (ReadHead has already refused bytes outside printable ASCII.)
func ParseInnerTarget(method, target string) (InnerTarget, error) {
	var t InnerTarget
	if i := strings.IndexByte(target, '#'); i >= 0 {
		target = target[:i]
	}
	switch {
	case target == "*":
		if method != "OPTIONS" {
			return t, Malformed("asterisk-form request-target of a method other than OPTIONS")
		}
		t.Path = "*"
		return t, nil
	case strings.HasPrefix(target, "/"):
	default:
		scheme, rest, ok := strings.Cut(target, "://")
		if !ok || !(strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "http")) {
			return t, Malformed("request-target is not in origin, absolute or asterisk form")
		}
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		t.Scheme, t.Authority = strings.ToLower(scheme), rest[:end]
		if t.Authority == "" || strings.IndexByte(t.Authority, '@') >= 0 {
			return t, Malformed("request-target authority")
		}
		t.prefix = target[:len(scheme)+3+end]
		target = rest[end:]
		if target == "" || target[0] == '?' {
			target = "/" + target // an empty path is "/" (RFC 9112 §3.2.2)
		}
	}
	t.Path, t.Query, t.hasQuery = strings.Cut(target, "?")
	return t, nil
}

// NormalizePath normalizes a request path the way servers and URL
// parsers may before they route it, so that the decider is not shown one
// resource while the upstream serves another:
//
//   - a backslash is a slash (WHATWG URL parsing of http and https URLs);
//   - percent-encoded unreserved characters are decoded (RFC 3986
//     §6.2.2.2), which also makes "%2e" a dot, and a '%' that starts no
//     escape is written "%25";
//   - dot segments are removed (RFC 3986 §5.2.4).
//
// Other percent-encodings and the case of their hex digits are kept: they
// do not change which resource a path names.
func NormalizePath(p string) string {
	if p == "*" {
		return p
	}
	if strings.IndexByte(p, '\\') >= 0 {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	if strings.IndexByte(p, '%') >= 0 {
		p = decodeUnreserved(p)
	}
	return removeDotSegments(p)
}

// decodeUnreserved decodes %XX escapes of unreserved characters and
// writes a '%' that starts no escape as "%25" (a server may read "%%37"
// as "%7", and then "%70" as "p").
func decodeUnreserved(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		c, ok := byte(0), false
		if i+2 < len(p) {
			c, ok = Unhex2(p[i+1], p[i+2])
		}
		switch {
		case !ok:
			b.WriteString("%25")
		case unreserved(c):
			b.WriteByte(c)
			i += 2
		default:
			b.WriteString(p[i : i+3])
			i += 2
		}
	}
	return b.String()
}

// Unhex2 decodes the two hex digits of a %XX escape; ok is false unless
// both are hex digits.
func Unhex2(a, b byte) (byte, bool) {
	x, ok1 := unhex(a)
	y, ok2 := unhex(b)
	return x<<4 | y, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unreserved reports RFC 3986 §2.3 unreserved characters.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments is RFC 3986 §5.2.4's algorithm.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // output segments, each with its leading '/' (or none for a relative start)
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			end := strings.IndexByte(in[start:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end += start
			}
			out = append(out, in[:end])
			in = in[end:]
		}
	}
	return strings.Join(out, "")
}

// NamesTarget reports whether an authority ("host", "host:port", "[v6]",
// "[v6]:port") names host:port, with defPort for an authority without one.
func NamesTarget(auth string, defPort int, host string, port int) bool {
	h, p, err := splitAuthority(auth)
	if err != nil {
		return false
	}
	if p == 0 {
		p = defPort
	}
	c, err := hostname.Canonical(h)
	return err == nil && c == host && p == port
}
