package http1

import (
	"net"
	"strconv"
	"strings"

	"github.com/srt-sandbox/decider/hostname"
)

// AbsTarget is a parsed absolute-form request-target (RFC 9112 §3.2.2).
type AbsTarget struct {
	Scheme string // "http" or "https", lower case
	Host   string // canonical, IPv6 without brackets
	Port   int    // the explicit port, or the scheme's default
	Path   string // up to '?', as spelled; "/" when empty
	Query  string // after the first '?', up to a '#'
}

// ParseAbsoluteTarget parses "http://authority/path?query". Userinfo in the
// authority is dropped (the host after the last '@' is the destination);
// a fragment is dropped. A host that hostname.Canonical refuses, a port
// outside 1–65535 and any other scheme are malformed.
func ParseAbsoluteTarget(t string) (AbsTarget, error) {
	var a AbsTarget
	scheme, rest, ok := strings.Cut(t, "://")
	switch {
	case !ok:
		return a, Malformed("request-target is not absolute-form")
	case strings.EqualFold(scheme, "http"):
		a.Scheme, a.Port = "http", 80
	case strings.EqualFold(scheme, "https"):
		a.Scheme, a.Port = "https", 443
	default:
		return a, Malformed("request-target scheme")
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
		a.Port = port
	}
	if a.Host, err = hostname.Canonical(host); err != nil {
		return a, Malformed("host")
	}
	a.Path, a.Query, _ = strings.Cut(rest, "?")
	if a.Path == "" {
		a.Path = "/"
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
			return "", 0, Malformed("authority")
		}
		host, rest = auth[1:end], auth[end+1:]
	} else if i := strings.IndexByte(auth, ':'); i >= 0 {
		host, rest = auth[:i], auth[i:]
	} else {
		host = auth
	}
	if host == "" {
		return "", 0, Malformed("empty host")
	}
	if rest == "" || rest == ":" {
		return host, 0, nil
	}
	digits, ok := strings.CutPrefix(rest, ":")
	if !ok || len(digits) > 5 {
		return "", 0, Malformed("port")
	}
	port, err = strconv.Atoi(digits)
	if err != nil || port < 1 || port > 65535 || digits[0] == '+' || digits[0] == '-' {
		return "", 0, Malformed("port")
	}
	return host, port, nil
}

// ParseConnectTarget parses a CONNECT request-target, "host:port" or
// "[v6]:port", into a canonical host and port.
func ParseConnectTarget(t string) (string, int, error) {
	host, port, err := hostname.SplitHostPort(t)
	if err != nil {
		return "", 0, Malformed("CONNECT target")
	}
	canon, err := hostname.Canonical(host)
	if err != nil {
		return "", 0, Malformed("CONNECT target host")
	}
	return canon, port, nil
}

// HostAuthority is host:port with brackets around IPv6, the port left out
// when it is the scheme's default (the Host header the proxy forwards).
func HostAuthority(scheme, host string, port int) string {
	if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
		if strings.IndexByte(host, ':') >= 0 {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// ConnectEstablished is the answer to an allowed CONNECT.
const ConnectEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n"
