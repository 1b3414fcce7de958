// Package llrules maps srt's filesystem rules onto Landlock's allow-only
// model, for the Landlock backend (a sandbox without namespaces).
//
// srt's rules are deny-then-allow: a view of "/" and, per path the plan
// covers, a view (writable, read-only, hidden) that holds beneath it
// until a deeper path says otherwise (initstage.FSRules). Landlock can
// only grant: a right given on a directory holds for everything beneath
// it, and nothing beneath can take it back. So a directory whose subtree
// mixes allowed and refused paths (a "chain" directory) gets no grant of
// its own: each of its entries is looked at instead, the allowed ones get
// their own grant, and mixed ones are split again, down to the refused
// paths. Two consequences, which docs/security.md states:
//
//   - Writes: Landlock cannot give a chain directory the right to create,
//     remove or rename its entries (the rights are the directory's, and
//     granting them would grant them beneath, on the protected path too).
//     The files and directories there at start are granted one by one;
//     the rest is the init stage's supervisor's (initstage chain_linux.go):
//     Compute returns the chain directories of the writes (Chain), each
//     with its protected names — those of its entries that are, or lead
//     to, a path whose writes the rules refuse, existing or not — and the
//     supervisor makes, removes and renames every other entry for the
//     command, and those of the directories it made beneath.
//   - Reads: a chain directory is listable only when no hidden directory
//     lies beneath it (listing is granted for a whole subtree); files that
//     appear in a chain directory after the start have no grant. Where the
//     rules let the command write such a directory, Compute returns it too
//     (Chain.Reads, with its hidden names), and the supervisor opens for
//     reading what the command makes there; elsewhere (another process's
//     new files) they are unreadable.
//
// The rules are computed on the host, once, at the start: what the
// directories hold then decides the grants.
package llrules

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
)

// The rights of one grant, as letters (the init stage reads them).
const (
	Read  = 'r' // read files, list directories and execute, beneath
	List  = 'l' // list this directory and every directory beneath (no file reads)
	Write = 'w' // every write right Landlock has, beneath
)

// Chain is a writable directory with a write-protected path beneath (a
// chain directory of the writes): Landlock cannot let the command make,
// remove or rename its entries, so the init stage's supervisor does it
// for the command, for every name but Protected (see the package doc).
type Chain struct {
	Path string
	// Protected are the names of its entries that are, or lead to, a
	// write-protected path, whether they exist or not: sorted.
	Protected []string
	// Reads marks a chain directory of the reads that the rules let the
	// command write (a hidden path beneath a writable directory): the
	// supervisor opens for reading what appears there, and Protected are
	// the names that are, or lead to, a hidden path.
	Reads bool
}

// Grant is one Landlock rule: a path and its rights.
type Grant struct {
	Path   string
	Rights string // letters of Read, List, Write
}

// Limit bounds the directories Compute lists and the grants it makes: a
// plan whose rules would need more is refused, never cut short.
const Limit = 200000

// ErrTooMany is returned when Limit is reached.
type ErrTooMany struct{}

func (ErrTooMany) Error() string {
	return "the filesystem rules need more than 200000 Landlock grants (a directory with a protected path beneath it holds too many entries)"
}

// Compute returns the grants for rules r on the filesystem fsys: reads
// (when reads is set; otherwise none, and reads are not restricted) and
// writes, and the chain directories of the writes. skip are trees Compute
// leaves alone (the host's /proc and /dev, which the caller grants
// itself).
func Compute(fsys fsview.FS, r *initstage.FSRules, reads bool, skip []string) ([]Grant, []Chain, error) {
	c := computer{fs: fsys, views: map[string]byte{}, skip: skip, out: map[string]string{}}
	for _, g := range r.Guards {
		p := filepath.Clean(g.Path)
		if !strings.HasPrefix(p, "/") || c.skipped(p) {
			continue
		}
		if _, seen := c.views[p]; !seen {
			c.paths = append(c.paths, p)
		}
		c.views[p] = g.View // a later guard at the same path wins
	}
	sort.Strings(c.paths)
	c.root = r.Root
	if err := c.carve("/", Write); err != nil {
		return nil, nil, err
	}
	if reads {
		if err := c.carve("/", Read); err != nil {
			return nil, nil, err
		}
	}
	paths := make([]string, 0, len(c.out))
	for p := range c.out {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := make([]Grant, len(paths))
	for i, p := range paths {
		out[i] = Grant{Path: p, Rights: c.out[p]}
	}
	sort.SliceStable(c.chains, func(i, j int) bool {
		a, b := c.chains[i], c.chains[j]
		return a.Reads != b.Reads && !a.Reads || a.Reads == b.Reads && a.Path < b.Path
	})
	return out, c.chains, nil
}

type computer struct {
	fs     fsview.FS
	root   byte
	views  map[string]byte
	paths  []string // sorted keys of views
	skip   []string
	out    map[string]string
	chains []Chain
	work   int
}

func (c *computer) skipped(p string) bool {
	for _, s := range c.skip {
		if within(p, s) {
			return true
		}
	}
	return false
}

// view is the view of p: the deepest guard at or above it, else the root's.
func (c *computer) view(p string) byte {
	for q := p; ; q = filepath.Dir(q) {
		if v, ok := c.views[q]; ok {
			return v
		}
		if q == "/" {
			return c.root
		}
	}
}

func allowed(v byte, kind byte) bool {
	if kind == Write {
		return v == initstage.ViewWritable
	}
	return v != initstage.ViewHidden
}

// beneath are the guarded paths strictly beneath dir.
func (c *computer) beneath(dir string) []string {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	i := sort.SearchStrings(c.paths, prefix)
	var out []string
	for ; i < len(c.paths) && strings.HasPrefix(c.paths[i], prefix); i++ {
		if c.paths[i] != dir {
			out = append(out, c.paths[i])
		}
	}
	return out
}

func (c *computer) grant(p string, right byte) error {
	c.work++
	if c.work > Limit {
		return ErrTooMany{}
	}
	if !strings.ContainsRune(c.out[p], rune(right)) {
		c.out[p] += string(right)
	}
	return nil
}

// carve grants kind (Read or Write) on everything beneath dir that the
// rules allow it on.
func (c *computer) carve(dir string, kind byte) error {
	here := allowed(c.view(dir), kind)
	under := c.beneath(dir)
	mixed := false
	for _, g := range under {
		if allowed(c.views[g], kind) != here {
			mixed = true
			break
		}
	}
	if !here {
		// Nothing here is granted: only the topmost allowed guards
		// beneath, each carved in turn.
		for _, g := range under {
			if allowed(c.views[g], kind) && !allowed(c.view(filepath.Dir(g)), kind) && c.nearest(dir, g, kind) {
				if err := c.carve(g, kind); err != nil {
					return err
				}
			}
		}
		return nil
	}
	fi, err := c.fs.Lstat(dir)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return nil // nothing there to grant (a symlink's target has its own path)
	}
	if !mixed || !fi.IsDir() {
		return c.grant(dir, kind)
	}
	// A chain directory: its entries one by one.
	switch {
	case kind == Write:
		c.chains = append(c.chains, Chain{Path: dir, Protected: c.protected(dir, under, Write)})
	case allowed(c.view(dir), Write):
		c.chains = append(c.chains, Chain{Path: dir, Protected: c.protected(dir, under, Read), Reads: true})
	}
	if kind == Read && !c.hidesDir(under) {
		if err := c.grant(dir, List); err != nil {
			return err
		}
	}
	entries, err := c.fs.ReadDir(dir)
	if err != nil {
		return nil // unlistable: nothing beneath is granted
	}
	for _, e := range entries {
		if err := c.carve(filepath.Join(dir, e.Name()), kind); err != nil {
			return err
		}
	}
	return nil
}

// protected are the names of dir's entries that are, or lie above, a path
// of under that refuses kind.
func (c *computer) protected(dir string, under []string, kind byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range under {
		if allowed(c.views[g], kind) {
			continue
		}
		rel := strings.TrimPrefix(g, dir)
		name, _, _ := strings.Cut(strings.TrimPrefix(rel, "/"), "/")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// nearest says whether no allowed guard lies strictly between dir and g:
// one that does is carved itself, and reaches g.
func (c *computer) nearest(dir, g string, kind byte) bool {
	for q := filepath.Dir(g); q != dir && q != "/"; q = filepath.Dir(q) {
		if v, ok := c.views[q]; ok && allowed(v, kind) {
			return false
		}
	}
	return true
}

// hidesDir says whether one of the guarded paths is hidden and a
// directory (or absent: it may be made a directory later): listing
// granted above it would list it.
func (c *computer) hidesDir(paths []string) bool {
	for _, p := range paths {
		if c.views[p] != initstage.ViewHidden {
			continue
		}
		fi, err := c.fs.Lstat(p)
		if err != nil || fi.IsDir() {
			return true
		}
	}
	return false
}

func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
