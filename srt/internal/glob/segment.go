package glob

import "strings"

type segKind uint8

const (
	segLiteral    segKind = iota // no metacharacters: compared as a string
	segWild                      // *, ? or a set within one segment
	segDoubleStar                // a whole segment of stars: any number of segments
)

type tokKind uint8

const (
	tokLit   tokKind = iota // a run of literal bytes
	tokStar                 // any run of characters
	tokAny                  // exactly one character
	tokClass                // one character of a set
)

type token struct {
	kind  tokKind
	lit   string
	class class
}

// segment is one '/'-separated component of a pattern.
type segment struct {
	kind segKind
	lit  string  // the text, for segLiteral
	toks []token // for segWild
}

// parseSegment compiles one component of a pattern.
func parseSegment(s string) segment {
	if len(s) >= 2 && strings.Trim(s, "*") == "" {
		return segment{kind: segDoubleStar}
	}
	toks := tokenize(s)
	if len(toks) == 0 || (len(toks) == 1 && toks[0].kind == tokLit) {
		return segment{kind: segLiteral, lit: s}
	}
	return segment{kind: segWild, toks: toks}
}

// tokenize splits a segment into tokens, merging adjacent literal bytes and
// adjacent stars.
func tokenize(s string) []token {
	var toks []token
	lit := 0 // start of the pending literal run
	flush := func(i int) {
		if i > lit {
			toks = append(toks, token{kind: tokLit, lit: s[lit:i]})
		}
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '*':
			flush(i)
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
			i++
			lit = i
		case '?':
			flush(i)
			toks = append(toks, token{kind: tokAny})
			i++
			lit = i
		case '[':
			c, n, ok := parseClass(s[i:])
			if !ok {
				i++
				continue
			}
			flush(i)
			toks = append(toks, token{kind: tokClass, class: c})
			i += n
			lit = i
		default:
			i++
		}
	}
	flush(len(s))
	return toks
}

// match reports whether the name (one path component) matches the segment.
// A segDoubleStar segment matches any single name.
func (g *segment) match(name string) bool {
	switch g.kind {
	case segLiteral:
		return name == g.lit
	case segDoubleStar:
		return true
	}
	if len(g.toks) == 2 && g.toks[0].kind == tokStar && g.toks[1].kind == tokLit {
		return strings.HasSuffix(name, g.toks[1].lit) // *.pem, the common shape
	}
	return matchTokens(g.toks, name)
}

// matchTokens is the classic wildcard match with backtracking to the last
// star only; it is linear in practice and O(len(toks)·len(name)) at worst.
// It is exact because every token other than a star matches at most one way.
func matchTokens(toks []token, name string) bool {
	ti, ni := 0, 0
	starT, starN := -1, 0
	for {
		if ti < len(toks) && toks[ti].kind == tokStar {
			starT, starN = ti, ni
			ti++
			continue
		}
		if ti == len(toks) && ni == len(name) {
			return true
		}
		if ti < len(toks) && ni < len(name) {
			if n := toks[ti].match(name[ni:]); n > 0 {
				ti++
				ni += n
				continue
			}
		}
		if starT < 0 || starN == len(name) {
			return false
		}
		_, w := nextChar(name[starN:])
		starN += w
		ti, ni = starT+1, starN
	}
}

// match returns how many bytes at the start of s the token consumes, or 0
// when it does not match there. s is non-empty; t is not a star.
func (t *token) match(s string) int {
	switch t.kind {
	case tokLit:
		if strings.HasPrefix(s, t.lit) {
			return len(t.lit)
		}
		return 0
	case tokAny:
		_, w := nextChar(s)
		return w
	}
	ch, w := nextChar(s)
	if t.class.matches(ch) {
		return w
	}
	return 0
}
