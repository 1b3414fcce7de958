package http1

import (
	"unicode/utf8"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// The limits of a request put to the decider (docs/decider-protocol.md,
// "What the proxy checks before asking"): a request past them is refused
// with 400 and the phrase, and the decider is not asked.
const (
	maxAskHeaderValues = 190
	maxAskHeaderBytes  = 64 << 10
	maxAskTargetBytes  = 8 << 10
)

// Unaskable returns why r cannot be put to the decider, or "".
func Unaskable(r *ask.Request) string {
	if r.Method == "" || r.Host == "" || r.Path == "" || r.Port < 1 || r.Port > 65535 {
		return WhyBadRequest
	}
	if len(r.Host) > maxAskTargetBytes || len(r.HostHeader) > maxAskTargetBytes || len(r.Path) > maxAskTargetBytes {
		return WhyTargetTooLarge
	}
	if !askableText(r.HostHeader) || !askableText(r.Path) || !askableText(r.Query) {
		return WhyBadRequest
	}
	count, size := 0, 0
	for name, values := range r.Headers {
		if !isToken([]byte(name)) || hostname.LowerASCII(name) != name {
			return WhyBadHeader
		}
		size += len(name)
		for _, v := range values {
			if !askableText(v) {
				return WhyBadHeader
			}
			count++
			size += len(v)
		}
	}
	if count > maxAskHeaderValues || size > maxAskHeaderBytes {
		return WhyHeadersTooLarge
	}
	return ""
}

// askableText reports whether s is valid UTF-8 without control characters
// other than TAB (C0, DEL and C1 are refused), as the protocol requires of
// every string it carries.
func askableText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\t':
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return false
		}
	}
	return true
}

// Refusal phrases of unaskable requests, compared verbatim by clients.
const (
	WhyHeadersTooLarge = "request headers too large"
	WhyTargetTooLarge  = "request target too large"
	WhyBadHeader       = "request header the decider cannot be asked about"
	WhyBadRequest      = "request the decider cannot be asked about"
)
