package plan

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// protect records a path that must not be written. Existing paths get a
// read-only mount; a missing one gets a placeholder when it could otherwise
// be created.
type protect struct {
	abs string
	// why names the rule: a settings field ("filesystem.denyWrite.0") or
	// "mandatory"; entry is the setting's text, for messages.
	why, entry string
	// dir: the path is a directory, so a missing one gets a directory
	// placeholder (a tool on the host may create files in it meanwhile).
	dir bool
	// readable: a missing file's placeholder reads as content inside,
	// instead of failing every open (git dies on a config file it cannot
	// open). content is what srt writes in it on the host, where programs
	// read it while the sandbox runs.
	readable bool
	content  string
	// parents: missing directories above the path are placeholders that
	// stay writable (only the path itself is protected), so that
	// protecting ~/.ssh/config does not make a missing ~/.ssh read-only.
	parents bool
	// seal: the path is protected, but directories reopened beneath it
	// stay writable (.git/modules and the git directories in it).
	seal bool
}

func (pr protect) mandatory() bool { return strings.HasPrefix(pr.why, "mandatory") }

// rule names the rule for a message: the setting and its text
// (filesystem.denyWrite.0 "deploy.sh"), or what srt protects and where.
func (pr protect) rule() string {
	if pr.entry != "" {
		return fmt.Sprintf("%s %q", pr.why, pr.entry)
	}
	return pr.why + " " + pr.abs
}

// wanted is a placeholder the protects need, and how it is seen inside.
type wanted struct {
	Placeholder
	protected bool // read-only inside; otherwise a writable parent
	readable  bool
	why       string
}

// applyProtects marks write-protected paths, creates placeholders for
// missing ones that could otherwise be created, and pins the writable
// directories above them.
func (b *builder) applyProtects() {
	wants := map[string]*wanted{}
	want := func(w wanted) {
		if old, ok := wants[w.Path]; ok {
			// A protected placeholder wins over a writable parent
			// at the same path; otherwise the first one stays.
			if w.protected && !old.protected {
				*old = w
			}
			return
		}
		wants[w.Path] = &w
	}
	var links []string         // always-protected names that are symlinks
	var shared []*wanted       // existing paths another run's placeholder may be
	done := map[protect]bool{} // the same repository may be reached twice
	for _, pr := range b.protect {
		if done[pr] {
			continue
		}
		done[pr] = true
		names := b.symlinkNames(pr)
		existing, missing, err := fsview.ResolveExisting(b.in.FS, pr.abs)
		if err == nil && missing == "" && len(names) > 0 && b.holdsWriteRoot(existing) {
			b.warnLinkToWriteRoot(pr, names, existing)
			continue
		}
		links = append(links, b.warnLinks(pr, names)...)
		b.p.ProtectedLinks = append(b.p.ProtectedLinks, names...)
		if err != nil {
			continue
		}
		if missing == "" {
			if w := b.protectExisting(pr, existing); w != nil {
				shared = append(shared, w)
			}
			continue
		}
		if !b.t.readable(existing) || !b.t.writable(existing) {
			continue // cannot be created inside anyway
		}
		parts := strings.Split(missing, "/")
		deeper := false // the placeholder stands for a missing directory above the path
		if !pr.parents {
			parts, deeper = parts[:1], len(parts) > 1 // the first missing component stands for all
		}
		dir := existing
		for i, part := range parts {
			dir = filepath.Join(dir, part)
			last := i == len(parts)-1
			w := wanted{Placeholder: Placeholder{Path: dir, Dir: !last || pr.dir || deeper}, protected: last, why: pr.why}
			if last && !w.Dir {
				w.Content, w.readable = pr.content, pr.readable || pr.content != ""
			}
			want(w)
		}
	}
	b.placeholders(wants)
	b.sharePlaceholders(shared, wants)
	b.warnSymlinks(links)
	// A read-denied path is pinned as a protected one is (issue 10, item
	// 3): with allowWrite "." and denyRead "config/secrets.env", renaming
	// config would otherwise carry the file out from under its mount, and
	// the next run would read it at its new name. The target itself is a
	// mount point already.
	for _, p := range b.readDenied {
		b.pinAbove(filepath.Dir(p))
	}
}

// protectExisting write-protects an existing path and pins the writable
// directories above it. It returns the placeholder the path would be, had
// it been missing, when it lies in a writable directory.
func (b *builder) protectExisting(pr protect, existing string) *wanted {
	if existing == "/" {
		b.t.root.writeDeny = true
		return nil
	}
	fi, err := b.in.FS.Lstat(existing)
	if err != nil {
		return nil
	}
	var w *wanted
	if b.t.writable(filepath.Dir(existing)) {
		w = &wanted{Placeholder: Placeholder{Path: existing, Dir: fi.IsDir(), Existing: true}}
		if !fi.IsDir() {
			w.Content = pr.content
		}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fi.IsDir() && st.Nlink > 1 {
		b.warnHardLinks(pr, existing, uint64(st.Nlink))
	}
	n := b.t.get(existing, fi.IsDir())
	b.mark(n, pr.why, func(n *node) {
		if pr.seal {
			n.seal = true
		} else {
			n.writeDeny = true
		}
	})
	b.pinAbove(filepath.Dir(existing))
	return w
}

// sharePlaceholders adds the existing protected paths to the placeholders
// the run asks for. One that is another live run's placeholder (it made it
// for the same protection) is then shared: that run does not remove it
// while this one mounts on it, which would detach this run's mount and let
// the command create the path. One that has gone by the time srt starts is
// made again; a file of the user's is left alone.
func (b *builder) sharePlaceholders(shared []*wanted, wants map[string]*wanted) {
	for _, w := range shared {
		if _, ok := wants[w.Path]; !ok {
			wants[w.Path] = w // once
			b.p.Placeholders = append(b.p.Placeholders, w.Placeholder)
		}
	}
	sort.Slice(b.p.Placeholders, func(i, j int) bool { return b.p.Placeholders[i].Path < b.p.Placeholders[j].Path })
}

// placeholders turns the wanted placeholders into nodes: a protected one
// read-only (null for a file unless readable), a writable parent pinned. A
// placeholder beneath a protected one is dropped: nothing can be created
// there anyway.
func (b *builder) placeholders(wants map[string]*wanted) {
	paths := make([]string, 0, len(wants))
	for p := range wants {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []Placeholder
	sealed := map[string]bool{} // protected placeholders
	for _, p := range paths {
		w := wants[p]
		if beneath(p, sealed) {
			continue
		}
		out = append(out, w.Placeholder)
		n := b.t.get(p, w.Dir)
		if !w.protected {
			b.mark(n, w.why+" (placeholder parent)", func(n *node) { n.pin = true })
			continue
		}
		sealed[p] = true
		b.mark(n, w.why+" (placeholder)", func(n *node) {
			n.placeholder, n.writeDeny, n.readablePlaceholder = true, true, w.readable
		})
		b.pinAbove(filepath.Dir(p))
	}
	b.p.Placeholders = out
}

// symlinkNames returns the components of a protected path that are
// symlinks in a writable directory: the kernel cannot mount on a symlink
// (a bind follows it), so srt protects what the link points to, while the
// link itself can be removed or replaced from inside.
func (b *builder) symlinkNames(pr protect) []string {
	var found []string
	p := "/"
	for _, c := range splitClean(pr.abs) {
		p = filepath.Join(p, c)
		fi, err := b.in.FS.Lstat(p)
		if err != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		// The link's directory is where it was found: p's parent is
		// already resolved.
		if b.t.writable(filepath.Dir(p)) {
			found = append(found, p)
		}
		if p, err = fsview.Realpath(b.in.FS, p); err != nil {
			break
		}
	}
	return found
}

// warnLinks warns about the symlinks of a denyWrite entry, and returns
// those of an always-protected path, for one warning.
func (b *builder) warnLinks(pr protect, names []string) []string {
	if pr.mandatory() {
		return names
	}
	for _, p := range names {
		b.warn("%s: %s is a symlink; srt protects what it points to, but the link itself can be removed or replaced from inside, because a mount cannot be placed on a symlink; replace the link by the file, or deny writes to %s", pr.rule(), p, filepath.Dir(p))
	}
	return nil
}

// warnSymlinks warns once about the always-protected names that are
// symlinks.
func (b *builder) warnSymlinks(links []string) {
	if len(links) == 0 {
		return
	}
	sort.Strings(links)
	uniq := links[:1]
	for _, l := range links[1:] {
		if l != uniq[len(uniq)-1] {
			uniq = append(uniq, l)
		}
	}
	b.warn("these always-protected paths are symlinks in a writable directory: %s; srt protects what they point to, but under the bubblewrap backend the links themselves can be removed or replaced from inside, because a mount cannot be placed on a symlink (the Landlock backend keeps them); replace the links by the files, or keep their directories out of allowWrite", strings.Join(uniq, ", "))
}

// warnHardLinks warns that a protected file has other names, through which
// it can still be written.
func (b *builder) warnHardLinks(pr protect, p string, links uint64) {
	what := fmt.Sprintf("%s names %s", pr.rule(), p)
	if pr.mandatory() {
		what = "srt always protects " + p
	}
	b.warn("%s, which has %d hard links: that name cannot be written, but the file's other names can; deny writes to their directories too, or remove the extra links", what, links)
}

// beneath says whether one of dirs lies above p.
func beneath(p string, dirs map[string]bool) bool {
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

func splitClean(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.Clean(p), "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
