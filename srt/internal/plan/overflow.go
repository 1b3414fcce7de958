package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/glob"
)

// A deny fails closed, but a deny that stops srt is an availability attack
// when a sandbox can make it stop (the fresh review of issue 10): a command
// that may write its working directory fills it — 100001 files, or 10001
// directories each holding a .env — until denyRead "./**/.env" walks more
// entries than srt's limit, or its matches need more mounts, and from then
// on every run with these settings fails before the command starts.
//
// So where what overflowed lies beneath a write grant, srt denies the
// directory holding it whole instead — hides it (denyRead,
// credentials.files, too many mounts: the Empty view, which no allow
// beneath it re-opens) or write-protects it (denyWrite) — and warns on
// every run, naming the entry, the directory and the fix. The deny only
// grows: nothing it names becomes readable or writable. Where what
// overflowed lies elsewhere no sandbox made it, and srt stops with the
// error that tells the user to narrow the pattern.

// maxHideRounds bounds the expansions of one deny pattern that each deny
// the directory holding most of what the last one walked (a command can
// fill many directories). Past it, srt denies the topmost directory
// beneath the write grant around the next one: there are only as many of
// those as grants.
const maxHideRounds = 8

// pickHidden is the rule that chooses the directory to deny whole. charged
// counts what each path holds itself — the entries a directory listed, a
// mount at the path — and a directory holds its own and all beneath it.
// Of the directories fillable accepts, it returns the deepest one that
// holds at least need, so that denying it alone is enough (the one that
// holds most, where several do); when none holds need, the one that holds
// most, for the caller to deny and ask again. Ties go to the deeper
// directory, then to the first in path order. ok is false when no
// fillable directory holds anything.
func pickHidden(charged map[string]int, fillable func(dir string) bool, need int) (dir string, held int, ok bool) {
	holds := map[string]int{}
	for p, n := range charged {
		for d := p; ; d = filepath.Dir(d) {
			holds[d] += n
			if d == "/" || d == "." {
				break
			}
		}
	}
	dirs := make([]string, 0, len(holds))
	for d, n := range holds {
		if n > 0 {
			dirs = append(dirs, d)
		}
	}
	sort.Slice(dirs, func(i, j int) bool {
		a, b := dirs[i], dirs[j]
		switch {
		case holds[a] != holds[b]:
			return holds[a] > holds[b]
		case depth(a) != depth(b):
			return depth(a) > depth(b)
		}
		return a < b
	})
	var enough []string
	for _, d := range dirs {
		if holds[d] < need {
			break
		}
		if fillable(d) {
			enough = append(enough, d)
		}
	}
	if len(enough) == 0 {
		for _, d := range dirs {
			if fillable(d) {
				return d, holds[d], true
			}
		}
		return "", 0, false
	}
	above := map[string]bool{} // holds one of enough beneath it
	for _, d := range enough {
		for a := d; a != "/" && a != "."; {
			a = filepath.Dir(a)
			above[a] = true
		}
	}
	for _, d := range enough {
		if !above[d] {
			return d, holds[d], true
		}
	}
	return "", 0, false // unreachable: the deepest of enough has none beneath
}

// fillable returns whether a sandbox may have filled a directory on the
// host: it lies beneath a write grant (allowWrite, the default write path)
// and shows the host's (a hidden directory is in memory), and it is not a
// file, a placeholder srt makes, or "/" (hiding which leaves nothing to
// run). A denyWrite beneath a grant does not make it safe: a run with other
// settings may have filled it.
func (b *builder) fillable() func(dir string) bool {
	made := map[string]bool{}
	for _, ph := range b.p.Placeholders {
		made[ph.Path] = !ph.Existing
	}
	return func(d string) bool {
		if d == "/" || made[d] {
			return false
		}
		if n, ok := b.t.nodes[d]; ok && !n.isDir {
			return false
		}
		granted := false
		b.t.ancestors(d, func(n *node) bool {
			granted = n.writeAllow
			return !granted
		})
		return granted && b.t.readable(d)
	}
}

// skip is the Skip of an expansion for role r: a directory denied whole
// is not walked again, nor anything beneath it (one write-protected whole
// only by another denyWrite).
func (b *builder) skip(r role) func(dir string) bool {
	return func(dir string) bool {
		if len(b.hidden)+len(b.sealed) == 0 {
			return false
		}
		for d := dir; ; d = filepath.Dir(d) {
			if b.hidden[d] || r == roleProtect && b.sealed[d] {
				return true
			}
			if d == "/" || d == "." {
				return false
			}
		}
	}
}

// expandDeny expands a deny pattern for r (roleHide or roleProtect), and
// returns the directories it denies whole instead of expanding in them:
// when the walk passes the entry limit, the deepest directory beneath a
// write grant that holds at least half of what it walked there
// (pickHidden; what it walked through a symlink counts where the link is,
// see chargedTo), and again on the next walk, up to maxHideRounds. A walk
// that passes the limit with nothing beneath a write grant stops srt.
func (b *builder) expandDeny(s spelled, pat *glob.Pattern, r role) (glob.Expansion, []string, error) {
	var whole []string
	opts := glob.ExpandOptions{FollowSymlinks: true, MaxEntries: b.limits.Entries, Skip: b.skip(r)}
	for round := 1; ; round++ {
		exp, err := glob.Expand(b.in.FS, pat, opts)
		var over *glob.TooManyEntriesError
		if !errors.As(err, &over) {
			return exp, whole, err
		}
		fill := b.fillable()
		charged, total, linked := map[string]int{}, 0, map[string]bool{}
		for d, n := range over.Charged {
			if to, ok := chargedTo(d, over.Via, fill); ok {
				charged[to] += n
				total += n
				linked[to] = linked[to] || to != d
			}
		}
		dir, _, ok := pickHidden(charged, fill, (total+1)/2)
		if !ok {
			return glob.Expansion{}, nil, fmt.Errorf("%s %q: %w: %w; none of them lie beneath allowWrite, so no sandbox made them: narrow the pattern", s.field, s.entry, ErrGlobTooBroad, err)
		}
		if round > maxHideRounds {
			for fill(filepath.Dir(dir)) {
				dir = filepath.Dir(dir)
			}
		}
		whole = append(whole, dir)
		verb := "hides"
		if r == roleProtect {
			verb = "write-protects"
			b.sealed[dir] = true
		} else {
			b.hidden[dir] = true
		}
		links := ""
		for d := range linked {
			if linked[d] && fsview.IsWithin(d, dir) {
				links = ", counting those its symlinks lead to"
			}
		}
		b.warn("%s %q: %s holds %d of the more than %d entries expanding it would walk%s, and a sandbox may write there; srt %s it whole rather than expand the pattern in it: remove what filled it, or anchor the pattern",
			s.field, s.entry, dir, holding(charged, dir), over.Limit, links, verb)
	}
}

// chargedTo returns the fillable directory whose doing the entries walked
// in d are: d itself, or, for a directory a followed symlink led into (a
// deny pattern's expansion follows them), the one holding the link, which
// a sandbox may have planted there to lead the walk into a large tree it
// may not write.
func chargedTo(d string, via map[string]string, fill func(string) bool) (string, bool) {
	for range len(via) + 1 {
		if fill(d) {
			return d, true
		}
		t := d
		for via[t] == "" && t != "/" {
			t = filepath.Dir(t)
		}
		if via[t] == "" {
			return "", false
		}
		d = via[t]
	}
	return "", false
}

// holding sums what charged holds at or beneath dir.
func holding(charged map[string]int, dir string) int {
	sum := 0
	for p, n := range charged {
		if fsview.IsWithin(p, dir) {
			sum += n
		}
	}
	return sum
}

// coalesce hides whole the directory pickHidden chooses among the plan's
// mounts, when there are more than srt's limit: the deepest that holds at
// least half the excess and one more, so that each call at least halves
// it (two filled directories are two calls, not their common parent). It
// fails when the mounts beneath write grants are too few to make up the
// excess: no sandbox made it.
func (b *builder) coalesce() error {
	n, limit := len(b.p.Mounts), b.limits.Mounts
	fill := b.fillable()
	memo := map[string]bool{}
	var within func(d string) bool // d or a directory above it is fillable
	within = func(d string) bool {
		v, ok := memo[d]
		if !ok {
			v = fill(d) || d != "/" && within(filepath.Dir(d))
			memo[d] = v
		}
		return v
	}
	charged, made := map[string]int{}, 0
	for _, m := range b.p.Mounts {
		charged[m.Path]++
		if within(filepath.Dir(m.Path)) {
			made++
		}
	}
	dir, held, ok := pickHidden(charged, fill, (n-limit+1)/2+1)
	if made <= n-limit || !ok || held < 2 {
		return fmt.Errorf("the filesystem rules need %d mounts, more than srt's limit of %d, and no directory beneath allowWrite holds enough of them to be hidden whole, so no sandbox filled one with them; narrow the patterns in denyRead, allowRead or denyWrite, or remove a symlink that leads a deny pattern into a large tree: %w", n, limit, ErrTooManyMounts)
	}
	rules := b.rulesWithin(dir)
	b.hideWhole(dir)
	b.warn("the filesystem rules need %d mounts, more than srt's limit of %d; %s holds %d of them (%s), and a sandbox may write there; srt hides it whole rather than mount each: remove what filled it, or anchor the patterns",
		n, limit, dir, held, rules)
	return nil
}

// rulesWithin names the rules of the mounts at or beneath dir, for a
// message.
func (b *builder) rulesWithin(dir string) string {
	seen := map[string]bool{}
	var out []string
	for _, m := range b.p.Mounts {
		if !fsview.IsWithin(m.Path, dir) {
			continue
		}
		for _, why := range strings.Split(m.Why, ", ") {
			if why == "pin" || seen[why] {
				continue
			}
			seen[why] = true
			if e, ok := b.entries[why]; ok {
				why = fmt.Sprintf("%s %q", why, e)
			}
			out = append(out, why)
		}
	}
	sort.Strings(out)
	if len(out) > 4 {
		out = append(out[:4], "…")
	}
	return strings.Join(out, ", ")
}

// hideWhole hides dir and everything beneath it: no allow re-opens any of
// it, and srt makes no placeholder there.
func (b *builder) hideWhole(dir string) {
	b.mark(b.t.get(dir, true), "too many mounts (hidden whole)", func(n *node) { n.strongDeny = true })
	b.hidden[dir] = true
	var drop []string
	for _, ph := range b.p.Placeholders {
		if fsview.IsWithin(ph.Path, dir) {
			drop = append(drop, ph.Path)
			if n, ok := b.t.nodes[ph.Path]; ok {
				n.placeholder = false
			}
		}
	}
	b.p.DropPlaceholders(drop)
}
