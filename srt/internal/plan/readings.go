package plan

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/glob"
)

// A read entry that is a pattern is also read the way the reference reads
// it where its pattern characters are part of names on disk: a directory
// "vault/[v1.2]" makes "vault/[v1.2]/*" also the pattern "*" beneath that
// very directory, besides the pattern whose "[v1.2]" matches one character
// (which "vault/v/*" would match). Of the entry's components that hold a
// pattern, the leading ones that exist as spelled are names; for each such
// component that a later pattern component follows, the entry is also that
// later part beneath the directory, as far as its name reaches
// (literalReadings in the reference's path-entries.js). When all of them
// exist, the entry is also the path it spells, which targets adds anyway.
//
// For an allow, no component from the first that holds a pattern may be a
// symlink (whoever can write the directory above it could have planted
// it, and the allow would open what it points at); a deny follows them.

// reading is a pattern beneath a literal directory: anchor, taken as a
// name, and rest, the pattern beneath it.
type reading struct {
	anchor, rest string
}

// literalReadings lists the readings of the pattern entry s beside its
// own, the longest anchor first.
func (b *builder) literalReadings(s spelled, deny bool) []reading {
	parts := strings.Split(s.rest, "/")
	var globAt []int
	for i, p := range parts {
		if glob.IsPattern(p) {
			globAt = append(globAt, i)
		}
	}
	if len(globAt) < 2 {
		return nil // a reading needs a pattern component after a named one
	}
	prefix := func(i int) string { return filepath.Join(s.base, strings.Join(parts[:i+1], "/")) }
	there := func(p string) bool {
		fi, err := b.in.FS.Lstat(p)
		return err == nil && (deny || fi.Mode()&fs.ModeSymlink == 0)
	}
	isDir := func(p string) bool {
		if deny {
			_, fi, err := fsview.Stat(b.in.FS, p)
			return err == nil && fi.IsDir()
		}
		fi, err := b.in.FS.Lstat(p)
		return err == nil && fi.IsDir()
	}
	first, last := globAt[0], globAt[len(globAt)-1]
	reach := first - 1
	for reach < last && there(prefix(reach+1)) {
		reach++
	}
	var out []reading
	for n := len(globAt) - 2; n >= 0 && reach >= first; n-- {
		at, next := globAt[n], globAt[n+1]
		if at > reach {
			continue
		}
		end := min(next-1, reach)
		for end >= at && !isDir(prefix(end)) {
			end--
		}
		if end < at || !deny && !b.unlinked(end+1, next-1, prefix) {
			continue
		}
		out = append(out, reading{anchor: prefix(end), rest: strings.Join(parts[end+1:], "/")})
	}
	return out
}

// unlinked says whether no component from..to (prefix's numbering) that
// exists is a symlink: the walk beneath an anchor resolves them before
// its first pattern component.
func (b *builder) unlinked(from, to int, prefix func(int) string) bool {
	for i := from; i <= to; i++ {
		fi, err := b.in.FS.Lstat(prefix(i))
		if err != nil {
			return true // not there yet: nothing beyond it either
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}
