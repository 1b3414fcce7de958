package glob

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"syscall"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// DefaultMaxEntries is the ExpandOptions.MaxEntries used when it is zero.
const DefaultMaxEntries = 100000

// ErrTooManyEntries is returned, as a *TooManyEntriesError, when an
// expansion visits more than MaxEntries entries. Callers expanding a deny
// must fail closed on it: hide what the walk could not finish, or stop.
var ErrTooManyEntries = errors.New("too many entries")

// TooManyEntriesError says where a walk gave up, and where its entries
// were, so that a caller can hide the directories that filled it.
type TooManyEntriesError struct {
	Pattern string
	Dir     string // the directory being walked, as spelled
	Limit   int
	// Charged counts the entries visited in each directory (listed, or
	// looked up by name), by the path the filesystem was asked about: the
	// resolved Prefix and names beneath it, or a followed symlink's
	// target. Entries of a directory the walk gave up in are all counted.
	Charged map[string]int
	// Via maps the directory each followed symlink led to (as asked
	// about) to the directory holding the link, for the first link that
	// led there: whose doing a walk into a foreign tree was.
	Via map[string]string
}

func (e *TooManyEntriesError) Error() string {
	return fmt.Sprintf("glob %q: walking %q: %v (limit %d)", e.Pattern, e.Dir, ErrTooManyEntries, e.Limit)
}

func (e *TooManyEntriesError) Unwrap() error { return ErrTooManyEntries }

// ExpandOptions bounds and shapes an expansion.
type ExpandOptions struct {
	// MaxEntries is how many entries (directory entries listed plus single
	// names looked up) may be visited before giving up; 0 or less means
	// DefaultMaxEntries.
	MaxEntries int
	// FollowSymlinks descends through symlinks to directories found beneath
	// the Prefix. A symlink can match either way. allowRead leaves it off.
	FollowSymlinks bool
	// Skip, when set, names directories the walk does not enter, by the
	// path the filesystem would be asked about (see Charged): a caller
	// that hides a directory whole need not expand the pattern in it. A
	// skipped directory can still match itself.
	Skip func(dir string) bool
}

// Expansion is what a pattern names on the filesystem.
type Expansion struct {
	// Matches are the existing paths that match, spelled beneath Prefix as
	// the pattern names them (not resolved), sorted and without duplicates.
	// A matching directory is descended into when the pattern can match
	// deeper (`/a/**` yields `/a/x` and `/a/x/y`), so the property
	// "Matches == existing paths p with Match(p)" holds when no symlink is
	// followed.
	Matches []string
	// Unlistable are directories that had to be inspected to find matches
	// but could not be (for example EACCES), sorted, so that the caller can
	// deny them whole. With FollowSymlinks this includes a symlink whose
	// target could not be inspected.
	Unlistable []string
	// Loops are the symlinks, spelled as Matches are, that FollowSymlinks
	// did not follow because they lead to "/" or to a directory at or
	// above their own: following one would walk that tree again from its
	// top (a link to "/" would walk the whole filesystem). Sorted.
	Loops []string
}

// Expand lists the existing paths that match p. It starts at p.Prefix()
// (resolving symlinks within it) and enters only directories that can still
// lead to a match: a literal segment costs one Lstat, a wildcard segment one
// listing, and a ** segment a full descent. A Prefix that does not exist, or
// is not a directory, gives an empty expansion. On error the expansion is
// empty.
func Expand(f fsview.FS, p *Pattern, o ExpandOptions) (Expansion, error) {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	w := &walker{f: f, p: p, o: o, charged: map[string]int{}, via: map[string]string{}}
	prefix := p.Prefix()
	s := p.start(p.lead)
	real, fi, err := fsview.Stat(f, prefix)
	switch {
	case err == nil:
	case gone(err) || errors.Is(err, fsview.ErrLoop):
		return Expansion{}, nil
	case errors.Is(err, fs.ErrPermission):
		return Expansion{Unlistable: []string{prefix}}, nil
	default:
		return Expansion{}, fmt.Errorf("glob %q: resolving %q: %w", p.text, prefix, err)
	}
	if p.accepts(s) {
		w.matches = append(w.matches, prefix) // only the pattern "/"
	}
	if fi.IsDir() && p.pending(s) {
		if err := w.walk(prefix, real, s); err != nil {
			return Expansion{}, err
		}
	}
	slices.Sort(w.matches)
	slices.Sort(w.unlistable)
	slices.Sort(w.loops)
	return Expansion{
		Matches:    slices.Compact(w.matches),
		Unlistable: slices.Compact(w.unlistable),
		Loops:      slices.Compact(w.loops),
	}, nil
}

// gone reports an error meaning the path does not exist (any more), which
// for a pattern simply means no match.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
