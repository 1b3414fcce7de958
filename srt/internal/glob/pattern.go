package glob

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrInvalidPattern is returned by Compile for a pattern that is not an
// absolute, clean path.
var ErrInvalidPattern = errors.New("invalid glob pattern")

// Pattern is a compiled absolute pattern.
type Pattern struct {
	text string
	segs []segment // after the leading "/"; consecutive ** collapsed
	lead int       // how many leading segments form Prefix
}

// IsPattern reports whether s contains a metacharacter that forms a pattern:
// a `*`, a `?` or a valid `[set]`. A string for which it is false compiles to
// a pattern that matches exactly itself.
func IsPattern(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		if parseSegment(seg).kind != segLiteral {
			return true
		}
	}
	return false
}

// Compile compiles abs, which must be absolute and clean (as filepath.Clean
// leaves it: no trailing "/", no empty, "." or ".." segments).
func Compile(abs string) (*Pattern, error) {
	if !strings.HasPrefix(abs, "/") {
		return nil, fmt.Errorf("%w %q: not an absolute path", ErrInvalidPattern, abs)
	}
	if c := filepath.Clean(abs); c != abs {
		return nil, fmt.Errorf("%w %q: not clean (write %q)", ErrInvalidPattern, abs, c)
	}
	return compile("/", abs)
}

// CompileWithLiteralPrefix compiles the pattern rest beneath the directory
// prefix, whose characters are all literal: a working directory named
// "[WIP] project" or "a*b" is a name, not a pattern; only rest, what the
// user wrote, can hold metacharacters. prefix must be absolute and clean,
// rest relative and clean (or empty: the pattern is prefix itself).
func CompileWithLiteralPrefix(prefix, rest string) (*Pattern, error) {
	if !strings.HasPrefix(prefix, "/") || filepath.Clean(prefix) != prefix {
		return nil, fmt.Errorf("%w %q: the literal prefix is not an absolute, clean path", ErrInvalidPattern, prefix)
	}
	if rest == "" {
		return compile(prefix, "/")
	}
	if strings.HasPrefix(rest, "/") || filepath.Clean(rest) != rest || rest == ".." || strings.HasPrefix(rest, "../") {
		return nil, fmt.Errorf("%w %q: not a clean relative path", ErrInvalidPattern, rest)
	}
	return compile(prefix, "/"+rest)
}

// compile builds the pattern whose literal part is lit and whose pattern
// part is pat ("/" or "/segments…").
func compile(lit, pat string) (*Pattern, error) {
	p := &Pattern{text: filepath.Join(lit, pat)}
	if lit != "/" {
		for _, s := range strings.Split(lit[1:], "/") {
			p.segs = append(p.segs, segment{kind: segLiteral, lit: s})
		}
	}
	if pat != "/" {
		for _, s := range strings.Split(pat[1:], "/") {
			g := parseSegment(s)
			if g.kind == segDoubleStar && len(p.segs) > 0 && p.segs[len(p.segs)-1].kind == segDoubleStar {
				continue // "**/**" is "**"
			}
			p.segs = append(p.segs, g)
		}
	}
	for p.lead < len(p.segs)-1 && p.segs[p.lead].kind == segLiteral {
		p.lead++
	}
	return p, nil
}

// String returns the pattern as given to Compile.
func (p *Pattern) String() string { return p.text }

// Prefix returns the longest leading directory of the pattern that has no
// metacharacters: every match lies beneath it. It is "/" when the first
// segment is a pattern or the pattern has a single segment.
func (p *Pattern) Prefix() string {
	var b strings.Builder
	for _, g := range p.segs[:p.lead] {
		b.WriteByte('/')
		b.WriteString(g.lit)
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// LeadingWildcard reports whether the first segment is a pattern, as in
// `/**/*.pem`. Such patterns would have to walk the whole filesystem, so
// callers skip them with a warning rather than expand them.
func (p *Pattern) LeadingWildcard() bool {
	return len(p.segs) > 0 && p.segs[0].kind != segLiteral
}

// Match reports whether path, which must be absolute, matches the pattern.
// A path that is not clean is cleaned first; a relative path never matches.
func (p *Pattern) Match(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	path = filepath.Clean(path)
	s, buf := p.start(0), state(nil)
	for rest := path[1:]; rest != ""; {
		name := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		buf = p.step(buf, s, name)
		if s, buf = buf, s; len(s) == 0 {
			return false
		}
	}
	return p.accepts(s)
}
