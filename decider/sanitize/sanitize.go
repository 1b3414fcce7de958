// Package sanitize makes untrusted text safe to show: on one line of a
// record (Line) and in an HTTP status phrase (StatusPhrase). srt's
// violation lines, the decider's records and srt-proxy's refusals pass
// every reason a decider or a client wrote through it.
package sanitize

import "strings"

// DefaultStatusPhrase is the CONNECT status phrase when a reason sanitises
// to nothing.
const DefaultStatusPhrase = "Forbidden"

// invisible reports whether r is one of the characters Line turns
// into a space: controls and characters that hide or reorder text.
func invisible(r rune) bool {
	switch {
	case r <= 0x1f, 0x7f <= r && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x00ad, r == 0x061c: // soft hyphen, Arabic letter mark
		return true
	case 0x200b <= r && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case 0x202a <= r && r <= 0x202e: // bidi embeddings and overrides
		return true
	case 0x2060 <= r && r <= 0x2064: // word joiner, invisible operators
		return true
	case 0x2066 <= r && r <= 0x2069: // bidi isolates
		return true
	case r == 0xfeff: // zero-width no-break space / BOM
		return true
	case 0xe0000 <= r && r <= 0xe007f: // tag characters
		return true
	}
	return false
}

// Line makes untrusted text safe for a one-line record (a violation
// line, a reason): every run of control, invisible or bidi characters
// becomes one space, '<' and '>' are removed, and the result is trimmed.
// Invalid UTF-8 becomes U+FFFD.
func Line(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inRun := false
	for _, r := range s {
		if invisible(r) {
			if !inRun {
				b.WriteByte(' ')
			}
			inRun = true
			continue
		}
		inRun = false
		if r == '<' || r == '>' {
			continue
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// StatusPhrase turns a denial reason into an HTTP status phrase: the
// Line form with every non-ASCII character (per code point) replaced
// by '?', or DefaultStatusPhrase when nothing is left.
func StatusPhrase(reason string) string {
	s := Line(reason)
	if s == "" {
		return DefaultStatusPhrase
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
