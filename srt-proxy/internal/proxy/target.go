package proxy

import (
	"net"
	"strconv"
	"strings"

	"github.com/srt-sandbox/decider/hostname"
)

// absTarget is a parsed absolute-form request-target (RFC 9112 §3.2.2).
type absTarget struct {
	scheme string // "http" or "https", lower case
	host   string // canonical, IPv6 without brackets
	port   int    // the explicit port, or the scheme's default
	path   string // up to '?', as spelled; "/" when empty
	query  string // after the first '?', up to a '#'
}

// parseAbsoluteTarget parses "http://authority/path?query". Userinfo in the
// authority is dropped (the host after the last '@' is the destination);
// a fragment is dropped. A host that hostname.Canonical refuses, a port
// outside 1–65535 and any other scheme are malformed.
func parseAbsoluteTarget(t string) (absTarget, error) {
	var a absTarget
	scheme, rest, ok := strings.Cut(t, "://")
	switch {
	case !ok:
		return a, malformed("request-target is not absolute-form")
	case strings.EqualFold(scheme, "http"):
		a.scheme, a.port = "http", 80
	case strings.EqualFold(scheme, "https"):
		a.scheme, a.port = "https", 443
	default:
		return a, malformed("request-target scheme")
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth, rest := rest[:end], rest[end:]
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
	}
	host, port, err := splitAuthority(auth)
	if err != nil {
		return a, err
	}
	if port != 0 {
		a.port = port
	}
	if a.host, err = hostname.Canonical(host); err != nil {
		return a, malformed("host")
	}
	a.path, a.query, _ = strings.Cut(rest, "?")
	if a.path == "" {
		a.path = "/"
	}
	return a, nil
}

// splitAuthority splits "host", "host:port", "[v6]" or "[v6]:port"; port 0
// means none was given ("host:" included).
func splitAuthority(auth string) (host string, port int, err error) {
	var rest string
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", 0, malformed("authority")
		}
		host, rest = auth[1:end], auth[end+1:]
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, rest = auth[:i], auth[i:]
	} else {
		host = auth
	}
	if host == "" {
		return "", 0, malformed("empty host")
	}
	if rest == "" || rest == ":" {
		return host, 0, nil
	}
	digits, ok := strings.CutPrefix(rest, ":")
	if !ok || len(digits) > 5 {
		return "", 0, malformed("port")
	}
	port, err = strconv.Atoi(digits)
	if err != nil || port < 1 || port > 65535 || digits[0] == '+' || digits[0] == '-' {
		return "", 0, malformed("port")
	}
	return host, port, nil
}

// parseConnectTarget parses a CONNECT request-target, "host:port" or
// "[v6]:port", into a canonical host and port.
func parseConnectTarget(t string) (string, int, error) {
	host, port, err := hostname.SplitHostPort(t)
	if err != nil {
		return "", 0, malformed("CONNECT target")
	}
	canon, err := hostname.Canonical(host)
	if err != nil {
		return "", 0, malformed("CONNECT target host")
	}
	return canon, port, nil
}

// hostAuthority is host:port with brackets around IPv6, the port left out
// when it is the scheme's default (the Host header the proxy forwards).
func hostAuthority(scheme, host string, port int) string {
	if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
		if strings.IndexByte(host, ':') >= 0 {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}
