package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/glob"
	"github.com/srt-sandbox/srt/settings"
)

// spelled is a settings entry made absolute: "~" expanded, relative paths
// joined to the working directory, "//" and "/./" collapsed, ".." folded, a
// trailing "/" or "/**" dropped from a path.
//
// The entry is kept in two parts. base is the directory it is written in —
// the working directory, home, or "/" for an absolute entry — which the
// caller gave rather than wrote: its characters are never pattern
// characters ("/x/[WIP] project" is a name), and its symlinks are taken as
// they are. rest is what the user wrote beneath it.
type spelled struct {
	field string // dotted settings path, for messages
	entry string // as written
	base  string // absolute, clean
	rest  string // relative, clean, "" for base itself
	abs   string // base and rest joined
	// pattern: rest holds a `*`, `?` or valid `[set]`.
	pattern bool
	// dotdot: a ".." follows a wildcard, as in "proj/*/../keep". Folding it
	// would change what the pattern names ("proj/[ab]/.." is not "proj"),
	// and expanding it is not supported: abs and rest are then unusable.
	dotdot bool
}

func (b *builder) spell(field string, e settings.PathEntry) spelled {
	s := spelled{field: field, entry: e.Path}
	b.entries[field] = e.Path
	p := e.Path
	switch {
	case p == "~":
		s.base, p = b.in.Home, ""
	case strings.HasPrefix(p, "~/"):
		s.base, p = b.in.Home, p[2:]
	case filepath.IsAbs(p):
		s.base = "/"
	default:
		s.base = b.in.Cwd
	}
	if !e.Literal {
		p = "/" + p
		for strings.HasSuffix(p, "/**") {
			p = strings.TrimSuffix(p, "/**")
		}
	}
	// ".." is folded as the path is read, left to right, until the first
	// wildcard: after it, a ".." is kept and the entry marked.
	var segs []string
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == ".." && s.pattern:
			s.dotdot = true
		case seg == "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			} else {
				s.base = filepath.Dir(s.base)
			}
			continue
		case !e.Literal && glob.IsPattern(seg):
			s.pattern = true
		}
		segs = append(segs, seg)
	}
	s.rest = strings.Join(segs, "/")
	s.abs = filepath.Join(s.base, s.rest)
	return s
}

// spellAbs is an absolute path that is not a settings entry of the
// filesystem lists (a CA file): never a pattern.
func spellAbs(field, p string) spelled {
	p = filepath.Clean(p)
	return spelled{field: field, entry: p, base: "/", rest: strings.TrimPrefix(p, "/"), abs: p}
}

// below returns p, a path spelled beneath s.base, relative to it.
func (s spelled) below(p string) string {
	if s.base == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, s.base), "/")
}
