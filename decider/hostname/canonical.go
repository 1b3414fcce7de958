// Package hostname is the host-name syntax srt's policy matches against and
// srt-proxy parses with: the canonical form of a destination host
// (Canonical), "host:port" splitting (SplitHostPort) and ASCII-only case
// folding (LowerASCII). It holds no policy: what a host may reach is
// decider/policy's business, which matches patterns against the hosts
// canonicalised here.
//
// Everything here is pure: no DNS, no files, no sockets.
package hostname

import (
	"errors"
	"net/netip"
	"strings"
)

// ReasonMalformed is the reference's denial reason for a destination host
// that is not a plain DNS name or IP literal (policy.ReasonMalformedHost).
const ReasonMalformed = "malformed host"

// ErrMalformed is returned for a destination host that is not a plain DNS
// name or IP literal. Its text is ReasonMalformed.
var ErrMalformed = errors.New(ReasonMalformed)

// MaxLen is the reference's isValidHost length limit.
const MaxLen = 255

// Canonical returns the form of a destination host that patterns are
// matched against, the way the WHATWG URL host parser spells it: lower-case,
// one trailing dot removed, IPv4 shorthand normalised ("127.1",
// "2130706433", "0x7f.0.0.1", "0177.0.0.1" → "127.0.0.1"), IPv6 compressed
// and returned WITHOUT brackets, an IPv4-mapped IPv6 address returned as
// its IPv4 address.
//
// The host is validated first, as the reference's isValidHost does: 1–255
// bytes, no '%' (so no zone ids), and either an IP literal (IPv6 bracketed
// or not) or only [A-Za-z0-9._-]. Beyond the reference, a host the URL
// parser would refuse (a numeric last label that is not a valid IPv4
// address, such as "1.2.3.4.5" or "foo.09"), a bracketed non-IPv6 host, and
// a name with an empty label (".a", "a..b", "a..") are malformed too: the
// reference matched those raw, but no resolver can reach them as spelled.
// Labels starting "xn--" are passed through without Punycode checks.
//
// Every failure is ErrMalformed. Canonical is idempotent.
func Canonical(h string) (string, error) {
	if h == "" || len(h) > MaxLen || strings.IndexByte(h, '%') >= 0 {
		return "", ErrMalformed
	}
	bare, bracketed := h, false
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		bare, bracketed = h[1:len(h)-1], true
	}
	if a, err := netip.ParseAddr(bare); err == nil {
		if bracketed && !a.Is6() {
			return "", ErrMalformed
		}
		return a.Unmap().String(), nil
	}
	if bracketed || bare == "" {
		return "", ErrMalformed
	}
	for i := 0; i < len(bare); i++ {
		if !IsNameByte(bare[i]) {
			return "", ErrMalformed
		}
	}
	name := LowerASCII(bare)
	if EndsInNumber(name) {
		a, ok := ParseIPv4Shorthand(name)
		if !ok {
			return "", ErrMalformed
		}
		return a.String(), nil
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") {
		return "", ErrMalformed
	}
	return name, nil
}

// IsNameByte reports whether c may appear in a host name: [A-Za-z0-9._-].
func IsNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '-' || c == '_'
}
