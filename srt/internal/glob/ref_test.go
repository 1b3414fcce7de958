package glob

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// refMatcher is an independent oracle for the segment NFA and the token
// matcher: a regular expression built from a compiled pattern by the rules in
// the package doc.
type refMatcher struct{ re *regexp.Regexp }

// MatchString reports whether the clean absolute path matches. The path is
// read as its segments, each followed by "/" ("/a/b" is "a/b/", "/" is
// empty), so that the root is zero segments here as it is to Match: a `*`
// segment may match an empty name inside the expression, never the root.
func (m refMatcher) MatchString(path string) bool {
	if path == "/" {
		return m.re.MatchString("")
	}
	return m.re.MatchString(path[1:] + "/")
}

func (m refMatcher) String() string { return m.re.String() }

// refRegexp translates p into a refMatcher. ok is false where the
// translation cannot be exact (invalid UTF-8, which regexp rejects or reads
// as U+FFFD).
func refRegexp(p *Pattern) (m refMatcher, ok bool) {
	if !utf8.ValidString(p.text) {
		return refMatcher{}, false
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i, g := range p.segs {
		switch {
		case g.kind == segDoubleStar && i == len(p.segs)-1:
			b.WriteString(`(?:[^/]+/)+`)
		case g.kind == segDoubleStar:
			b.WriteString(`(?:[^/]+/)*`)
		case g.kind == segLiteral:
			b.WriteString(regexp.QuoteMeta(g.lit) + "/")
		default:
			for _, t := range g.toks {
				b.WriteString(refToken(t))
			}
			b.WriteString("/")
		}
	}
	b.WriteString("$")
	return refMatcher{regexp.MustCompile(b.String())}, true
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
