package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// The scan's budgets. A command that may write a directory can fill it;
// the scan must then neither give up (what it did not look at would stay
// writable) nor take long. What it cannot look into within them is
// write-protected whole. Variables, so that tests can lower them.
var (
	// maxScanDirs bounds the directories the scan lists, across all the
	// directories it starts from. A directory of a million files is one
	// of them: it costs a pass over its entries, not a listing each.
	// A realistic home and project at the default depth list a few
	// thousand (docs/security.md has the numbers).
	maxScanDirs = 20000
	// maxScanListing bounds the entries the scan reads of one directory
	// (about half a second); a directory with more is protected whole.
	maxScanListing = 1000000
	// maxUnscanned bounds the directories protected whole because the
	// scan did not look into them, each a mount: past it, their parents
	// stand for them, and so on up to the directories the scan started
	// from.
	maxUnscanned = 16
)

// skipDirs are directories the scan does not descend into, and why that
// is safe.
var skipDirs = map[string]string{
	"node_modules": "installed packages: no one runs git or opens an editor in them (the reference skips it too)",
	".git":         "a repository: gitProtects covers what git reads in it",
}

// scanDir is a directory the scan will list.
type scanDir struct {
	path   string
	level  int // 1: a directory the scan starts from
	parent string
}

// scanner walks below every directory the command may write, breadth
// first, for the always-protected names that exist there.
type scanner struct {
	b      *builder
	cwd    string
	depth  int
	byName map[string]startup
	have   map[string]bool // paths already protected by name
	roots  map[string]bool
	left   int // directories the budget still allows
	out    []protect
	// unscanned are the directories the scan could not look into, or
	// not into all of.
	unscanned []string
}

// scanRoots lists the directories the scan starts from: the working
// directory (when anything in it may be written) and every directory an
// allowWrite entry (or a default write path) grants, by real path; /proc,
// /sys and /dev are the kernel's.
func (b *builder) scanRoots(cwd string) []string {
	var roots []string
	if b.anyWritableUnder(cwd) {
		roots = append(roots, cwd)
	}
	var grants []string
	for p, n := range b.t.nodes {
		if n.writeAllow && n.isDir && p != cwd && !underKernelFS(p) && !fsview.IsWithin(p, "/dev") {
			grants = append(grants, p)
		}
	}
	sort.Strings(grants)
	return append(roots, grants...)
}

// scan walks below roots (the working directory first, when it is one):
// at most depth components deep for protected files, one level less for
// protected directories and repositories (every entry named .git is one,
// whatever is in it: a command could move any file srt looked for aside
// for one run). The working directory's own entries are mandatory()'s.
// Directories it cannot list while they are writable, and those its
// budgets did not let it look into, are protected whole.
func (b *builder) scan(cwd string, roots []string, have map[string]bool) []protect {
	s := &scanner{b: b, cwd: cwd, depth: b.in.Config.MandatoryDenySearchDepth, byName: map[string]startup{},
		have: have, roots: map[string]bool{}, left: maxScanDirs}
	for _, st := range cwdProtects {
		s.byName[st.rel] = st
	}
	seen := map[string]bool{}
	var first, rest []scanDir
	for _, r := range roots {
		s.roots[r] = true
		seen[r] = true
		s.out = append(s.out, b.gitAbove(r)...)
		if r == cwd {
			first = append(first, scanDir{path: r, level: 1})
		} else {
			rest = append(rest, scanDir{path: r, level: 1})
		}
	}
	// The working directory first, with the whole budget: it is where
	// the command works, and what it should keep writing when a grant
	// above it (allowWrite ["~"]) holds more than the budget.
	s.walk(first, seen)
	s.walk(rest, seen)
	s.protectUnscanned()
	return s.out
}

// walk lists frontier and the levels below it, breadth first.
func (s *scanner) walk(frontier []scanDir, seen map[string]bool) {
	for len(frontier) > 0 {
		var next []scanDir
		for _, d := range s.fit(frontier) {
			for _, sub := range s.list(d) {
				if !seen[sub] {
					seen[sub] = true
					next = append(next, scanDir{path: sub, level: d.level + 1, parent: d.path})
				}
			}
		}
		frontier = next
	}
}

// fit returns the directories of one level the budget allows. When it
// does not allow them all, it lists whole families, smallest first (the
// subdirectories of one parent), so that one directory filled with
// subdirectories costs the others nothing; the parents of the families
// left out are protected whole.
func (s *scanner) fit(level []scanDir) []scanDir {
	if len(level) <= s.left || level[0].level == 1 {
		s.left -= len(level)
		return level
	}
	families := map[string][]scanDir{}
	var parents []string
	for _, d := range level {
		if _, ok := families[d.parent]; !ok {
			parents = append(parents, d.parent)
		}
		families[d.parent] = append(families[d.parent], d)
	}
	sort.Slice(parents, func(i, j int) bool {
		a, b := len(families[parents[i]]), len(families[parents[j]])
		return a < b || a == b && parents[i] < parents[j]
	})
	var out []scanDir
	for _, p := range parents {
		if f := families[p]; len(f) <= s.left {
			s.left -= len(f)
			out = append(out, f...)
		} else {
			s.unscanned = append(s.unscanned, p)
		}
	}
	return out
}

// list reads one directory: it protects the always-protected names in it
// and returns the subdirectories to descend into.
func (s *scanner) list(d scanDir) []string {
	var subs []string
	var named []fs.DirEntry // entries with a protected name, in listing order
	n, full := 0, true
	own := d.level == 1 && d.path == s.cwd // mandatory() protects these
	err := fsview.List(s.b.in.FS, d.path, func(e fs.DirEntry) bool {
		if n++; n > maxScanListing {
			full = false
			return false
		}
		name := e.Name()
		if _, known := s.byName[name]; (known || name == ".git") && !own {
			named = append(named, e)
		}
		if _, skip := skipDirs[name]; !skip && e.IsDir() && d.level < s.depth && !(d.path == "/" && kernelDir(name)) {
			subs = append(subs, filepath.Join(d.path, name))
		}
		return true
	})
	switch {
	case err != nil:
		if !errors.Is(err, fs.ErrNotExist) && s.b.t.writable(d.path) && d.path != s.cwd {
			s.out = append(s.out, protect{abs: d.path, why: "mandatory (unlistable)"})
		}
		return nil
	case !full:
		s.unscanned = append(s.unscanned, d.path)
		return nil
	}
	sort.Slice(named, func(i, j int) bool { return named[i].Name() < named[j].Name() })
	for _, e := range named {
		s.found(filepath.Join(d.path, e.Name()), e, d.level)
	}
	sort.Strings(subs)
	return subs
}

// found protects an entry with an always-protected name: files down to the
// depth limit, directories and repositories one level less deep.
func (s *scanner) found(p string, e fs.DirEntry, level int) {
	name := e.Name()
	link := e.Type()&fs.ModeSymlink != 0
	st, known := s.byName[name]
	switch {
	case s.have[p]:
	case name == ".git" && level < s.depth:
		s.out = append(s.out, s.b.gitProtects(p)...)
	case known && st.dir && (e.IsDir() || link) && level < s.depth:
		s.out = append(s.out, protect{abs: p, why: "mandatory", dir: true})
	case known && !st.dir && (e.Type().IsRegular() || link):
		s.out = append(s.out, protect{abs: p, why: "mandatory"})
	}
}

// kernelDir names the top-level directories of the kernel's filesystems,
// which the sandbox gets its own of.
func kernelDir(name string) bool { return name == "proc" || name == "sys" || name == "dev" }

// gitAbove protects the repository a write root lies in when the root is
// inside its git directory (allowWrite ["~/repo/.git"]): the scan finds
// only entries named .git below a root.
func (b *builder) gitAbove(root string) []protect {
	parts := splitClean(root)
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == ".git" {
			return b.gitProtects("/" + strings.Join(parts[:i+1], "/"))
		}
	}
	return nil
}

// protectUnscanned protects whole the directories the scan could not look
// into, at most maxUnscanned of them (the deepest give way to their
// parents), and says so.
func (s *scanner) protectUnscanned() {
	if len(s.unscanned) == 0 {
		return
	}
	dirs := outermost(s.unscanned)
	for len(dirs) > maxUnscanned {
		deepest := -1
		for _, d := range dirs {
			if !s.roots[d] && depth(d) > deepest {
				deepest = depth(d)
			}
		}
		if deepest < 0 {
			break // only the roots are left
		}
		for i, d := range dirs {
			if !s.roots[d] && depth(d) == deepest {
				dirs[i] = filepath.Dir(d)
			}
		}
		dirs = outermost(dirs)
	}
	for _, d := range dirs {
		s.out = append(s.out, protect{abs: d, why: "mandatory (not scanned)", dir: true})
	}
	s.b.warn("srt looks for the paths it always write-protects (.git, .bashrc, .vscode, …) in at most %d directories, and in at most %d entries of one, and could not look into all of these: %s; they are read-only for this run. Remove what fills them, lower mandatoryDenySearchDepth (now %d), or narrow filesystem.allowWrite",
		maxScanDirs, maxScanListing, strings.Join(dirs, ", "), s.depth)
}

// outermost sorts paths, drops duplicates and those beneath another.
func outermost(paths []string) []string {
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	kept := map[string]bool{}
	var out []string
	for _, p := range sorted {
		if !kept[p] && !kept["/"] && !beneath(p, kept) {
			kept[p] = true
			out = append(out, p)
		}
	}
	return out
}
