package sbpl

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind says what a Node is.
type Kind int

const (
	// List is a parenthesised form; its elements are in Items.
	List Kind = iota
	// Symbol is a bare word (allow, file-read*, AF_UNIX, 1, #t).
	Symbol
	// String is a "…" string; Text is its value after escapes.
	String
	// Regex is a #"…" regular-expression literal; Text is its value
	// (backslashes kept, as the regex engine reads them).
	Regex
)

// Node is one datum read from a profile.
type Node struct {
	Kind  Kind
	Text  string
	Items []*Node
	// Pos is the byte offset where the datum starts, for error messages.
	Pos int
}

// maxDepth bounds nesting, so a hostile input cannot exhaust the stack.
const maxDepth = 64

// Read parses SBPL text into its top-level data. Comments (";" to the end
// of the line and "#| … |#" blocks) are skipped.
func Read(src string) ([]*Node, error) {
	r := &reader{src: src}
	var out []*Node
	for {
		r.skipSpace()
		if r.pos >= len(r.src) {
			return out, nil
		}
		n, err := r.datum(0)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

type reader struct {
	src string
	pos int
}

func (r *reader) errorf(pos int, format string, args ...any) error {
	line := 1 + strings.Count(r.src[:min(pos, len(r.src))], "\n")
	return fmt.Errorf("sbpl: line %d (offset %d): %s", line, pos, fmt.Sprintf(format, args...))
}

func (r *reader) skipSpace() {
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			r.pos++
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.pos++
			}
		case strings.HasPrefix(r.src[r.pos:], "#|"):
			end := strings.Index(r.src[r.pos+2:], "|#")
			if end < 0 {
				r.pos = len(r.src)
				return
			}
			r.pos += 2 + end + 2
		default:
			return
		}
	}
}

func (r *reader) datum(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, r.errorf(r.pos, "nesting deeper than %d", maxDepth)
	}
	start := r.pos
	c := r.src[r.pos]
	switch {
	case c == '(':
		r.pos++
		n := &Node{Kind: List, Pos: start}
		for {
			r.skipSpace()
			if r.pos >= len(r.src) {
				return nil, r.errorf(start, "unclosed \"(\"")
			}
			if r.src[r.pos] == ')' {
				r.pos++
				return n, nil
			}
			item, err := r.datum(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, item)
		}
	case c == ')':
		return nil, r.errorf(start, "unexpected \")\"")
	case c == '"':
		s, err := r.str()
		return &Node{Kind: String, Text: s, Pos: start}, err
	case strings.HasPrefix(r.src[r.pos:], `#"`):
		r.pos++
		s, err := r.rawRegex()
		return &Node{Kind: Regex, Text: s, Pos: start}, err
	case c == '\'' || c == '`' || c == ',':
		return nil, r.errorf(start, "quotation (%q) is not supported", c)
	default:
		for r.pos < len(r.src) && !strings.ContainsRune(" \t\n\r\f\v();\"'`,", rune(r.src[r.pos])) {
			r.pos++
		}
		if r.pos == start {
			return nil, r.errorf(start, "unexpected %q", c)
		}
		return &Node{Kind: Symbol, Text: r.src[start:r.pos], Pos: start}, nil
	}
}

// str reads a "…" string with the escapes TinyScheme (SBPL's reader)
// accepts: \" \\ \n \t \r \a \0 and \xHH (optionally ended by ";").
func (r *reader) str() (string, error) {
	start := r.pos
	r.pos++
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		r.pos++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if r.pos >= len(r.src) {
				return "", r.errorf(start, "unterminated string")
			}
			e := r.src[r.pos]
			r.pos++
			switch e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte('\a')
			case '0':
				b.WriteByte(0)
			case 'x', 'X':
				if r.pos+2 > len(r.src) {
					return "", r.errorf(r.pos-2, "short \\x escape")
				}
				v, err := strconv.ParseUint(r.src[r.pos:r.pos+2], 16, 8)
				if err != nil {
					return "", r.errorf(r.pos-2, "bad \\x escape %q", r.src[r.pos:r.pos+2])
				}
				b.WriteByte(byte(v))
				r.pos += 2
				if r.pos < len(r.src) && r.src[r.pos] == ';' {
					r.pos++
				}
			default:
				return "", r.errorf(r.pos-2, "unknown string escape \"\\%c\"", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", r.errorf(start, "unterminated string")
}

// rawRegex reads the body of a #"…" literal: the text up to the first
// unescaped quote, with every backslash kept (a regex literal is not
// unescaped; `\"` puts a quote in it).
func (r *reader) rawRegex() (string, error) {
	start := r.pos - 1
	r.pos++
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		r.pos++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if r.pos >= len(r.src) {
				return "", r.errorf(start, "unterminated regex literal")
			}
			b.WriteByte(c)
			b.WriteByte(r.src[r.pos])
			r.pos++
		default:
			b.WriteByte(c)
		}
	}
	return "", r.errorf(start, "unterminated regex literal")
}
