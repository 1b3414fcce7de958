package glob

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// refRegexp translates a compiled pattern into a regular expression by the
// rules in the package doc, as an independent oracle for the segment NFA
// and the token matcher. ok is false where the translation cannot be exact
// (invalid UTF-8, which regexp rejects or reads as U+FFFD).
func refRegexp(p *Pattern) (re *regexp.Regexp, ok bool) {
	if !utf8.ValidString(p.text) {
		return nil, false
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	if len(p.segs) == 0 {
		b.WriteString("/")
	}
	for i, g := range p.segs {
		switch {
		case g.kind == segDoubleStar && i == len(p.segs)-1:
			b.WriteString(`(?:/[^/]+)+`)
		case g.kind == segDoubleStar:
			b.WriteString(`(?:/[^/]+)*`)
		case g.kind == segLiteral:
			b.WriteString("/" + regexp.QuoteMeta(g.lit))
		default:
			b.WriteString("/")
			for _, t := range g.toks {
				b.WriteString(refToken(t))
			}
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()), true
}

func refToken(t token) string {
	switch t.kind {
	case tokLit:
		return regexp.QuoteMeta(t.lit)
	case tokStar:
		return `[^/]*`
	case tokAny:
		return `[^/]`
	}
	var b strings.Builder
	b.WriteString("[")
	if t.class.negate {
		b.WriteString("^/")
	}
	for _, r := range t.class.ranges {
		fmt.Fprintf(&b, `\x{%x}-\x{%x}`, r.lo, r.hi)
	}
	b.WriteString("]")
	return b.String()
}
