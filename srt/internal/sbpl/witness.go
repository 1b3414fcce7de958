package sbpl

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// Witnesses: a few paths an atom matches, and a fast test of whether an
// atom matches a path. They answer most questions of oracle.go without
// the exact (and slower) derivative search: one witness of x that y does
// not match shows x is not within y; one that both match shows they are
// not disjoint.

const maxWitnesses = 16

// witnesses lists up to maxWitnesses canonical paths a matches.
func witnesses(a atom) []string {
	var out []string
	switch a.kind {
	case 'l':
		out = []string{a.path}
	case 's':
		out = []string{a.path, strings.TrimSuffix(a.path, "/") + "/w"}
	case 'r':
		re, err := syntax.Parse(a.path, syntax.Perl|syntax.DotNL)
		if err != nil {
			return nil
		}
		out = gen(re.Simplify())
	}
	kept := out[:0]
	for _, w := range out {
		if canonical(w) {
			kept = append(kept, w)
		}
	}
	return kept
}

func canonical(p string) bool {
	return p == "/" || (strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && !strings.Contains(p, "//"))
}

// gen lists strings re matches (a few per choice), ignoring anchors.
func gen(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune) && len(out) < 3; i += 2 {
			out = append(out, string(re.Rune[i]))
			if re.Rune[i] == '/' && re.Rune[i+1] > '/' {
				out = append(out, string(rune('/'+1)))
			}
		}
		return out
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return []string{"w", "/"}
	case syntax.OpCapture:
		return gen(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		return append([]string{""}, gen(re.Sub[0])...)
	case syntax.OpPlus:
		return gen(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			out = append(out, gen(s)...)
		}
		return cap16(out)
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			var next []string
			for _, x := range out {
				for _, y := range gen(s) {
					next = append(next, x+y)
				}
			}
			out = cap16(next)
		}
		return out
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return []string{""}
	}
	return nil
}

// cap16 keeps the first maxWitnesses strings, preferring canonical paths.
func cap16(s []string) []string {
	if len(s) <= maxWitnesses {
		return s
	}
	var good, rest []string
	for _, x := range s {
		if canonical(x) || !strings.Contains(x, "//") {
			good = append(good, x)
		} else {
			rest = append(rest, x)
		}
	}
	return append(good, rest...)[:maxWitnesses]
}

// matcher tests paths against atoms, compiling each regex once.
type matcher struct{ res map[string]*regexp.Regexp }

// match says whether a matches path p; ok is false when that is not
// known (an atom of another kind, a regex Go does not compile).
func (m *matcher) match(a atom, p string) (matched, ok bool) {
	switch a.kind {
	case 'l':
		return p == a.path, true
	case 's':
		return under(p, a.path), strings.HasPrefix(a.path, "/")
	case 'r':
		re, found := m.res[a.path]
		if !found {
			re, _ = regexp.Compile("(?s)" + a.path)
			m.res[a.path] = re
		}
		if re == nil {
			return false, false
		}
		return re.MatchString(p), true
	}
	return false, false
}
