package glob

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// walker carries one expansion. Each directory is known by two names: as
// spelled beneath the pattern's Prefix (what is reported) and as the path
// the filesystem is asked about (the resolved Prefix plus entries beneath,
// or a resolved symlink target when following).
type walker struct {
	f          fsview.FS
	p          *Pattern
	o          ExpandOptions
	seen       int
	charged    map[string]int    // entries visited, by directory asked about
	via        map[string]string // followed symlinks' targets: the link's directory
	matches    []string
	unlistable []string
	loops      []string
	stack      []frame // directories being walked, when following symlinks
	scratch    state   // the state after the entry being visited
}

// frame is a directory on the walk's current descent, by resolved path and
// state: meeting the same pair again through a symlink is a cycle.
type frame struct{ real, key string }

// walk visits the children of the directory dir (spelled) / at (to ask
// about) that can advance the state s.
func (w *walker) walk(dir, at string, s state) error {
	if w.o.Skip != nil && w.o.Skip(at) {
		return nil
	}
	if w.o.FollowSymlinks {
		w.stack = append(w.stack, frame{at, s.key()})
		defer func() { w.stack = w.stack[:len(w.stack)-1] }()
	}
	if names, ok := w.p.literals(s); ok {
		return w.probe(dir, at, s, names)
	}
	ents, err := w.f.ReadDir(at)
	if err != nil {
		if !gone(err) {
			w.unlistable = append(w.unlistable, dir)
		}
		return nil
	}
	if err := w.count(dir, at, len(ents)); err != nil {
		return err
	}
	for _, e := range ents {
		if err := w.visit(dir, at, e.Name(), e.Type(), s); err != nil {
			return err
		}
	}
	return nil
}

// probe looks up the only names that can advance s, without listing dir.
func (w *walker) probe(dir, at string, s state, names []string) error {
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			continue
		}
		if err := w.count(dir, at, 1); err != nil {
			return err
		}
		fi, err := w.f.Lstat(join(at, name))
		if err != nil {
			if !gone(err) {
				w.unlistable = append(w.unlistable, dir)
			}
			continue
		}
		if err := w.visit(dir, at, name, fi.Mode().Type(), s); err != nil {
			return err
		}
	}
	return nil
}

// visit advances the state s of dir by its child name, records the child if
// it matches, and descends into it if it is a directory (or, when following,
// a symlink to one) and more of the pattern remains.
func (w *walker) visit(dir, at, name string, typ fs.FileMode, s state) error {
	w.scratch = w.p.step(w.scratch, s, name)
	next := w.scratch
	if w.p.accepts(next) {
		w.matches = append(w.matches, join(dir, name))
	}
	link := typ&fs.ModeSymlink != 0 && w.o.FollowSymlinks
	if !w.p.pending(next) || !typ.IsDir() && !link {
		return nil
	}
	if slices.Equal(next, s) {
		next = s // the usual case beneath a **: no copy
	} else {
		next = slices.Clone(next) // w.scratch is reused below
	}
	if !link {
		return w.walk(join(dir, name), join(at, name), next)
	}
	child := join(dir, name)
	real, fi, err := fsview.Stat(w.f, join(at, name))
	switch {
	case err == nil:
	case gone(err) || errors.Is(err, fsview.ErrLoop):
		return nil
	default:
		w.unlistable = append(w.unlistable, child)
		return nil
	}
	if !fi.IsDir() || w.onStack(frame{real, next.key()}) {
		return nil
	}
	if fsview.IsWithin(at, real) {
		// A link to "/" or to a directory above itself would walk that
		// tree again, from the top: never an expansion the pattern meant.
		w.loops = append(w.loops, child)
		return nil
	}
	if _, ok := w.via[real]; !ok {
		w.via[real] = at
	}
	return w.walk(child, real, next)
}

func (w *walker) onStack(f frame) bool {
	for _, g := range w.stack {
		if g == f {
			return true
		}
	}
	return false
}

// count charges n entries visited in the directory dir (spelled) / at
// (asked about) against MaxEntries.
func (w *walker) count(dir, at string, n int) error {
	w.seen += n
	w.charged[at] += n
	if w.seen > w.o.MaxEntries {
		return &TooManyEntriesError{Pattern: w.p.text, Dir: dir, Limit: w.o.MaxEntries, Charged: w.charged, Via: w.via}
	}
	return nil
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}
