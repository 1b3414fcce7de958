package glob

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Regex returns a POSIX extended regular expression, anchored at both ends,
// that matches the same absolute clean paths as the pattern: the form
// macOS's Seatbelt profiles take a pattern in ((regex "…")), so that the
// macOS sandbox reads a pattern exactly as Match does, files that do not
// exist yet included. With subtree, everything beneath a matching path
// matches too.
//
// The expression uses only what POSIX EREs and Go's regexp read alike:
// escaped metacharacters, bracket expressions whose members are plain
// ASCII (a `]` first, a `-` last, a backslash doubled), groups,
// alternation, `*` and `+`. A `?` and a `*` are written for a regex
// engine that matches a character per step, as Go's does; an engine that
// steps bytes matches a `?` against one byte of a non-ASCII character
// (docs/macos.md). A set that holds non-ASCII characters is written as an
// alternation of them, and one that excludes non-ASCII characters ([!é])
// cannot be written: Regex returns an error for it.
func (p *Pattern) Regex(subtree bool) (string, error) {
	var b strings.Builder
	b.WriteByte('^')
	if len(p.segs) == 0 {
		b.WriteByte('/')
		if subtree {
			b.WriteString(".*")
		}
		b.WriteByte('$')
		return b.String(), nil
	}
	for i, g := range p.segs {
		switch {
		case g.kind == segLiteral:
			b.WriteByte('/')
			b.WriteString(quoteRegex(g.lit))
		case g.kind == segDoubleStar:
			if i == len(p.segs)-1 {
				b.WriteString("(/[^/]+)+") // one or more segments, as Match
			} else {
				b.WriteString("(/[^/]+)*")
			}
		case len(g.toks) == 1 && g.toks[0].kind == tokStar:
			b.WriteString("/[^/]+") // a name is never empty: "/*" does not match "/"
		default:
			b.WriteByte('/')
			for _, t := range g.toks {
				switch t.kind {
				case tokLit:
					b.WriteString(quoteRegex(t.lit))
				case tokStar:
					b.WriteString("[^/]*")
				case tokAny:
					b.WriteString("[^/]")
				case tokClass:
					s, err := classRegex(t.class)
					if err != nil {
						return "", fmt.Errorf("%w %q: %v", ErrInvalidPattern, p.text, err)
					}
					b.WriteString(s)
				}
			}
		}
	}
	if subtree {
		b.WriteString("(/.*)?")
	}
	b.WriteByte('$')
	return b.String(), nil
}

// regexMeta are the characters an ERE gives a meaning outside brackets.
const regexMeta = `.[]()*+?{}|^$\`

// quoteRegex escapes the metacharacters of s with a backslash; every other
// byte stands for itself.
func quoteRegex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(regexMeta, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// maxClassAlternatives bounds how many non-ASCII characters a set may be
// written as, one alternative each.
const maxClassAlternatives = 256

// classRegex writes a set as a bracket expression of its ASCII members
// (never '/', which no segment holds) and an alternation of the others.
func classRegex(c class) (string, error) {
	var ascii [128]bool
	var other []string
	for _, r := range c.ranges {
		for ch := r.lo; ch <= r.hi; ch++ {
			if ch < 128 {
				ascii[ch] = true
				continue
			}
			if c.negate {
				return "", fmt.Errorf("the set excludes the non-ASCII character %q, which a Seatbelt regex cannot express; write the pattern with * or list what it names", string(ch))
			}
			if len(other) == maxClassAlternatives {
				return "", fmt.Errorf("the set holds more than %d non-ASCII characters, which a Seatbelt regex cannot express; narrow it", maxClassAlternatives)
			}
			other = append(other, quoteRegex(charString(ch)))
		}
	}
	ascii['/'] = false
	if c.negate {
		ascii['/'] = true // never across a separator
	}
	// Bracket order: ']' first, the plain members, '[' (never followed
	// by ':', '.' or '='), '\' doubled, '^' (never first), '-' last.
	var body strings.Builder
	n := 0
	for ch := range ascii {
		if ascii[ch] {
			n++
		}
	}
	if ascii[']'] {
		body.WriteByte(']')
	}
	for ch := 0; ch < 128; ch++ {
		if ascii[ch] && !strings.ContainsRune(`][\^-`, rune(ch)) {
			body.WriteByte(byte(ch))
		}
	}
	if ascii['['] {
		body.WriteByte('[')
	}
	if ascii['\\'] {
		body.WriteString(`\\`)
	}
	if ascii['^'] {
		body.WriteByte('^')
	}
	if ascii['-'] {
		body.WriteByte('-')
	}
	if c.negate {
		return "[^" + body.String() + "]", nil
	}
	var alts []string
	if n > 0 {
		if n == 1 && !ascii[']'] && !ascii['['] && !ascii['\\'] && !ascii['^'] && !ascii['-'] {
			alts = append(alts, quoteRegex(body.String()))
		} else if ascii['^'] && n == 1 {
			alts = append(alts, `\^`)
		} else {
			alts = append(alts, "["+body.String()+"]")
		}
	}
	alts = append(alts, other...)
	switch len(alts) {
	case 0:
		return "", fmt.Errorf("the set holds no character but '/', which no name holds")
	case 1:
		return alts[0], nil
	}
	return "(" + strings.Join(alts, "|") + ")", nil
}

// charString is the text of a character: its UTF-8 encoding, or the byte
// that is not valid UTF-8 (nextChar's surrogateescape mapping).
func charString(ch char) string {
	if ch >= 0xDC80 && ch <= 0xDCFF {
		return string([]byte{byte(ch - 0xDC00)})
	}
	var buf [utf8.UTFMax]byte
	return string(buf[:utf8.EncodeRune(buf[:], ch)])
}
