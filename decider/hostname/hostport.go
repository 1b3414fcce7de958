package hostname

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadHostPort is wrapped by every SplitHostPort failure.
var ErrBadHostPort = errors.New("bad host:port")

// SplitHostPort splits "host:port" or "[ipv6]:port" (a CONNECT target or
// URL authority). The host is returned as written, without brackets; it is
// not canonicalised (see Canonical). The port is 1–65535 in decimal
// (leading zeros tolerated, at most five digits). An unbracketed host with a
// colon ("::1:443") is refused as ambiguous, as is brackets around a host
// without a colon.
func SplitHostPort(s string) (host string, port int, err error) {
	var rest string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, badHostPort("missing ']'")
		}
		host, rest = s[1:end], s[end+1:]
		if !strings.Contains(host, ":") {
			return "", 0, badHostPort("brackets around a host that is not IPv6")
		}
	} else {
		i := strings.LastIndexByte(s, ':')
		if i < 0 {
			return "", 0, badHostPort("missing port")
		}
		host, rest = s[:i], s[i:]
		if strings.Contains(host, ":") || strings.ContainsAny(host, "[]") {
			return "", 0, badHostPort("IPv6 host without brackets")
		}
	}
	digits, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return "", 0, badHostPort("missing port")
	}
	if host == "" {
		return "", 0, badHostPort("empty host")
	}
	if len(digits) == 0 || len(digits) > 5 {
		return "", 0, badHostPort("port is not 1-65535")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", 0, badHostPort("port is not 1-65535")
		}
		port = port*10 + int(digits[i]-'0')
	}
	if port < 1 || port > 65535 {
		return "", 0, badHostPort("port is not 1-65535")
	}
	return host, port, nil
}

func badHostPort(why string) error {
	return fmt.Errorf("%w: %s", ErrBadHostPort, why)
}
