package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/glob"
	"github.com/srt-sandbox/srt/settings"
)

// spelled is a settings entry made absolute: "~" expanded, relative paths
// joined to the working directory, "//" and "/./" collapsed, a trailing "/"
// or "/**" dropped from a path.
type spelled struct {
	field   string // dotted settings path, for messages
	entry   string // as written
	abs     string
	pattern bool
}

func (b *builder) spell(field string, e settings.PathEntry) spelled {
	p := b.expand(e.Path) // cleaned only after a trailing "/**" is cut
	s := spelled{field: field, entry: e.Path}
	if !e.Literal {
		for strings.HasSuffix(p, "/**") {
			p = strings.TrimSuffix(p, "/**")
		}
		if p == "" {
			p = "/"
		}
		s.pattern = glob.IsPattern(p)
	}
	s.abs = filepath.Clean(p)
	return s
}
