package plan

import (
	"fmt"
	"strings"
)

// A path the user listed that does not exist is most often a typo, which
// would otherwise show only as "Read-only file system" (allowWrite) or as
// a secret left readable once it is created (denyRead). The plan says so
// in a warning, one for each list, printed on every run: for allowWrite,
// denyRead and credentials.files entries the user wrote (srt's own
// entries, the default write path and the mandatory protections, are
// expected to be missing). A pattern that matches nothing is not named:
// "**/.env" with no .env anywhere is the common case. A missing allowRead
// path re-allows nothing, harmlessly: it is a debug note.

// missingLists are the lists whose missing entries are named in a
// warning, with what such an entry fails to do.
var missingLists = []struct {
	list, effect string
}{
	{"filesystem.allowWrite", "so they grant nothing; make them before srt starts (a path made later stays read-only in the sandbox), or correct the entries"},
	{"filesystem.denyRead", "so they hide nothing; a path made while the sandbox runs is readable in it, so correct an entry with a typo"},
	{"credentials.files", "so they hide nothing; a path made while the sandbox runs is readable in it, so correct an entry with a typo"},
}

// missingPath records that the entry s names a path that does not exist.
func (b *builder) missingPath(s spelled) {
	list := listOf(s.field)
	b.note("%s %q: %s does not exist", s.field, s.entry, s.abs)
	b.missing[list] = append(b.missing[list], fmt.Sprintf("%q (%s)", s.entry, s.abs))
}

// listOf is the list a field is an entry of: "filesystem.allowWrite.3" is
// in "filesystem.allowWrite", "credentials.files.0.path" in
// "credentials.files".
func listOf(field string) string {
	parts := strings.Split(field, ".")
	if len(parts) >= 3 {
		return parts[0] + "." + parts[1]
	}
	return field
}

// warnMissing adds the warnings about missing paths.
func (b *builder) warnMissing() {
	for _, l := range missingLists {
		if m := b.missing[l.list]; len(m) > 0 {
			b.warn("%s names paths that do not exist, %s: %s", l.list, l.effect, strings.Join(m, ", "))
		}
	}
}
