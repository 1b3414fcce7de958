package glob

import "unicode/utf8"

// char is one character of a name: a Unicode code point, or, for a byte that
// is not valid UTF-8, U+DC00 plus the byte (the "surrogateescape" mapping).
// Valid UTF-8 never encodes surrogates, so distinct inputs stay distinct.
type char = rune

// nextChar decodes the first character of s and returns it with its width.
func nextChar(s string) (char, int) {
	r, w := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && w == 1 {
		return 0xDC00 + rune(s[0]), 1
	}
	return r, w
}

// charRange is an inclusive range of characters; a single member has lo == hi.
type charRange struct{ lo, hi char }

// class is a bracket expression such as [a-z] or [!x].
type class struct {
	negate bool
	ranges []charRange
}

func (c *class) matches(ch char) bool {
	for _, r := range c.ranges {
		if r.lo <= ch && ch <= r.hi {
			return !c.negate
		}
	}
	return c.negate
}

// parseClass parses the bracket expression that starts at seg[0] == '['.
// It returns the class and the length of its text, or ok == false when the
// bracket forms no valid set (unterminated, empty or with a reversed range),
// in which case the caller treats the '[' as a literal character.
func parseClass(seg string) (c class, n int, ok bool) {
	i := 1
	if i < len(seg) && (seg[i] == '!' || seg[i] == '^') {
		c.negate = true
		i++
	}
	end := i
	for end < len(seg) && seg[end] != ']' {
		end++
	}
	if end == len(seg) || end == i {
		return class{}, 0, false
	}
	body := seg[i:end]
	for len(body) > 0 {
		lo, w := nextChar(body)
		body = body[w:]
		hi := lo
		if len(body) >= 2 && body[0] == '-' {
			hi, w = nextChar(body[1:])
			body = body[1+w:]
			if hi < lo {
				return class{}, 0, false
			}
		}
		c.ranges = append(c.ranges, charRange{lo, hi})
	}
	return c, end + 1, true
}
