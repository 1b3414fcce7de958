package plan

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/glob"
)

type target struct {
	path  string
	isDir bool
	links uint64 // hard links of a file (0 when unknown)
	id    *FileID
	// whole: a directory a deny pattern's expansion overflowed in, denied
	// whole instead (overflow.go): no allow beneath it re-opens anything.
	whole bool
}

// role is what a pattern's targets are for.
type role int

const (
	roleAllow   role = iota // allowRead: shown
	roleHide                // denyRead, credentials.files: hidden
	roleProtect             // denyWrite: write-protected
)

// targets resolves a read entry to the real paths it names now. A pattern
// is expanded (see glob.Expand): a deny's expansion follows symlinked
// directories, so that "proj/**/.env" also hides proj/out/deep/.env when
// out -> ../outside (issue 10, item 18); an allow's does not, and an allow
// never passes through a symlink a sandbox could have made (see granted).
// A deny also covers the directories it could not list, and ignores a path
// that leads to "/" or above itself (see crossing); where its expansion
// overflows beneath a write grant, it denies whole the directory that
// filled it (see expandDeny).
func (b *builder) targets(s spelled, r role) ([]target, error) {
	deny := r != roleAllow
	var out []target
	// add resolves the path p and reports whether it exists.
	add := func(p string) bool {
		var real string
		var fi fs.FileInfo
		if deny {
			if b.crosses(s, p) {
				return true // named in a warning
			}
			var err error
			if real, fi, err = fsview.Stat(b.in.FS, p); err != nil {
				return false
			}
		} else {
			var ok, refused bool
			if real, fi, ok, refused = b.grant(s, p); !ok {
				return refused // a refusal is named in a warning
			}
		}
		if underProc(real) {
			b.warn("%s %q names %s under /proc; the sandbox gets a fresh /proc, so the entry has no effect", s.field, s.entry, real)
			return true
		}
		t := target{path: real, isDir: fi.IsDir(), id: idOf(fi)}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fi.IsDir() {
			t.links = uint64(st.Nlink)
		}
		out = append(out, t)
		return true
	}
	if !s.pattern {
		if !add(s.abs) {
			if deny {
				b.missingPath(s)
			} else {
				b.note("%s %q: %s does not exist, so it re-allows nothing", s.field, s.entry, s.abs)
			}
		}
		return out, nil
	}
	add(s.abs) // a pattern is also the path of that name where it exists
	addWhole := func(d string) { out = append(out, target{path: d, isDir: true, whole: true}) }
	pat, err := glob.CompileWithLiteralPrefix(s.base, s.rest)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", s.field, s.entry, err)
	}
	if pat.LeadingWildcard() {
		b.warn("%s %q starts with a wildcard, so srt cannot expand it and it has no effect; root it in a directory (for example \"~/**/*.pem\")", s.field, s.entry)
		return out, nil
	}
	if err := b.expandPattern(s, pat, r, add, addWhole); err != nil {
		return nil, err
	}
	// The readings where its pattern characters name directories on disk
	// (readings.go).
	for _, rd := range b.literalReadings(s, deny) {
		pat, err := glob.CompileWithLiteralPrefix(rd.anchor, rd.rest)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", s.field, s.entry, err)
		}
		if err := b.expandPattern(s, pat, r, add, addWhole); err != nil {
			return nil, err
		}
	}
	return dedupe(out), nil
}

// expandPattern adds what the pattern pat of the entry s names, for role
// r, through add (targets): its matches, and for a deny the directories it
// denies whole (addWhole).
func (b *builder) expandPattern(s spelled, pat *glob.Pattern, r role, add func(string) bool, addWhole func(string)) error {
	deny := r != roleAllow
	var exp glob.Expansion
	var whole []string
	var err error
	if deny {
		if exp, whole, err = b.expandDeny(s, pat, r); err != nil {
			return err
		}
	} else if exp, err = glob.Expand(b.in.FS, pat, glob.ExpandOptions{MaxEntries: b.limits.Entries, Skip: b.skip(r)}); err != nil {
		b.warn("%s %q: %v; the entry re-allows nothing", s.field, s.entry, err)
		return nil
	}
	for _, d := range whole {
		addWhole(d)
	}
	for _, m := range exp.Matches {
		if !deny && b.isLink(m) {
			continue // allowRead patterns do not follow symlinks
		}
		add(m)
	}
	if deny {
		for _, d := range exp.Unlistable {
			add(d)
		}
		for _, l := range exp.Loops {
			to, _ := b.in.FS.Readlink(l)
			b.warn("%s %q: not following the symlink %s -> %s while expanding: it leads to / or above itself, and following it would walk that whole tree again", s.field, s.entry, l, to)
		}
	}
	return nil
}

// dedupe keeps the first target of each path; a path denied whole stays
// whole.
func dedupe(ts []target) []target {
	seen := map[string]int{}
	out := ts[:0]
	for _, t := range ts {
		if i, ok := seen[t.path]; ok {
			out[i].whole = out[i].whole || t.whole
			continue
		}
		seen[t.path] = len(out)
		out = append(out, t)
	}
	return out
}

func underProc(p string) bool { return p == "/proc" || strings.HasPrefix(p, "/proc/") }
