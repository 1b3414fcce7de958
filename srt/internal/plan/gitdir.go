package plan

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// gitEntry is a part of a git directory that git reads as configuration,
// as a pointer to another directory, or as code to run. Everything else
// (objects, refs, index, HEAD, logs, packed-refs, FETCH_HEAD, ORIG_HEAD…)
// stays writable, so git keeps working inside.
type gitEntry struct {
	rel string
	dir bool
	// content is what a missing file's placeholder holds: git reads
	// these whenever they exist, so the placeholder must mean what the
	// file's absence meant.
	content string
	why     string
}

// gitEntries are protected in every git directory srt finds: the working
// directory's, nested repositories', the one around the working directory
// and each submodule's under .git/modules. config is left out under
// filesystem.allowGitConfig.
var gitEntries = []gitEntry{
	{rel: "config", why: "core.fsmonitor, core.hooksPath, aliases, filter and diff drivers run commands"},
	{rel: "config.worktree", why: "read as config once extensions.worktreeConfig is on (git sparse-checkout turns it on)"},
	// "." is the git directory itself: what git assumes without the file.
	{rel: "commondir", content: ".\n", why: "moves the repository's config, hooks and objects to another directory"},
	{rel: "hooks", dir: true, why: "run by commit, merge, checkout, push, …"},
	{rel: "info", dir: true, why: "attributes select filter and diff drivers; exclude, grafts, sparse-checkout"},
	{rel: "objects/info/alternates", why: "borrows objects from other repositories, and fetch runs git in each of them"},
	// Only when the config has no remote of that name; a push to a local
	// path runs that repository's hooks.
	{rel: "remotes", dir: true, why: "legacy remote definitions: where fetch and push go"},
	{rel: "branches", dir: true, why: "legacy remote definitions: where fetch goes"},
}

// worktreeEntries are protected in each linked worktree's administrative
// directory (.git/worktrees/<id>). A new one is as good as a new repository
// (git uses it only through a .git file naming it), so worktrees/ itself
// stays writable and `git worktree add` works inside.
var worktreeEntries = []gitEntry{
	{rel: "commondir", content: "../..\n", why: "points the worktree at its repository"},
	{rel: "gitdir", why: "where the worktree is: git worktree remove deletes that directory"},
	{rel: "config.worktree", why: "read as config once extensions.worktreeConfig is on"},
}

// gitMarkers are the names that make a directory under .git/modules a git
// directory. Any one is enough, and hooks and info are protected in it, so
// a command cannot make a submodule's git directory unrecognisable by
// moving files aside: what is left is sealed read-only.
var gitMarkers = []string{"HEAD", "config", "objects", "refs", "index", "packed-refs", "hooks", "info", "commondir"}

const (
	// maxModuleDepth bounds the walk for git directories under
	// .git/modules (a submodule's name may have slashes in it).
	maxModuleDepth = 6
	// maxModuleNesting bounds submodules of submodules.
	maxModuleNesting = 4
)

// gitProtects protects what a .git entry holds. A directory (or a link to
// one) gets gitDirProtects. A .git file (a worktree's or submodule's
// pointer) or a dangling link is protected itself, and so is the git
// directory the file points to, where the rules let it be written: the
// working directory may be a linked worktree of a repository elsewhere.
//
// A .git link or file that leads to "/" or to a directory holding the
// working directory is ignored, with a warning (see linkroot.go): its
// config, hooks and modules would be that directory's entries.
func (b *builder) gitProtects(gitPath string) []protect {
	lfi, err := b.in.FS.Lstat(gitPath)
	if err != nil {
		return nil
	}
	if real, fi, err := fsview.Stat(b.in.FS, gitPath); err == nil && fi.IsDir() {
		if lfi.Mode()&fs.ModeSymlink != 0 && b.holdsCwd(real) {
			b.warnGitToCwd(gitPath, real)
			return nil
		}
		return b.gitDirProtects(gitPath, 0)
	}
	out := []protect{{abs: gitPath, why: "mandatory"}}
	if dir := b.pointer(gitPath, "gitdir: ", filepath.Dir(gitPath)); dir != "" {
		out = append(out, b.linkedGitDir(dir, filepath.Dir(gitPath))...)
	}
	return out
}

// maxPointer bounds what srt reads of a .git file or a commondir.
const maxPointer = 4096

// pointer reads a one-line file that names a directory (a .git file's
// "gitdir: <dir>", a commondir's "<dir>"), as git does, and resolves it
// against base. It returns "" when the file says nothing usable.
func (b *builder) pointer(file, prefix, base string) string {
	data, err := b.in.FS.ReadFile(file, maxPointer)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), prefix)
	if !ok || v == "" {
		return ""
	}
	if !filepath.IsAbs(v) {
		v = filepath.Join(base, v)
	}
	return filepath.Clean(v)
}

// linkedGitDir protects the git directory a .git file points to, when
// something in it may be written: a linked worktree's administrative
// directory (it has a commondir) gets worktreeEntries, and the repository
// it belongs to gitDirProtects; any other git directory gitDirProtects.
func (b *builder) linkedGitDir(dir, worktree string) []protect {
	real, fi, err := fsview.Stat(b.in.FS, dir)
	if err != nil || !fi.IsDir() || !b.anyWritableUnder(real) {
		return nil
	}
	if b.holdsCwd(real) {
		b.warnGitToCwd(filepath.Join(worktree, ".git"), real)
		return nil
	}
	common := b.pointer(filepath.Join(dir, "commondir"), "", dir)
	if common == "" {
		return b.gitDirProtects(dir, 0)
	}
	var out []protect
	for _, e := range worktreeEntries {
		out = append(out, e.protect(dir))
	}
	if real, fi, err := fsview.Stat(b.in.FS, common); err == nil && fi.IsDir() && b.anyWritableUnder(real) {
		out = append(out, b.gitDirProtects(common, 0)...)
	}
	// The worktree's hooks run in it: a relative core.hooksPath is there.
	return append(out, b.hooksPathProtects(filepath.Join(common, "config"), worktree)...)
}

// gitDirProtects protects a git directory's configuration, pointers and
// hooks, those of each linked worktree's administrative directory, and
// those of each submodule's git directory under modules/, which is sealed:
// read-only but for the git directories found in it.
func (b *builder) gitDirProtects(dir string, nesting int) []protect {
	var out []protect
	for _, e := range gitEntries {
		if e.rel == "config" && b.in.Config.Filesystem.AllowGitConfig {
			continue
		}
		out = append(out, e.protect(dir))
	}
	worktree := "" // where hooks run, for a relative core.hooksPath
	if filepath.Base(dir) == ".git" {
		worktree = filepath.Dir(dir)
	}
	out = append(out, b.hooksPathProtects(filepath.Join(dir, "config"), worktree)...)
	wts := filepath.Join(dir, "worktrees")
	if ents, err := b.in.FS.ReadDir(wts); err == nil {
		for _, d := range ents {
			if d.IsDir() {
				for _, e := range worktreeEntries {
					out = append(out, e.protect(filepath.Join(wts, d.Name())))
				}
			}
		}
	}
	modules := filepath.Join(dir, "modules")
	out = append(out, protect{abs: modules, why: "mandatory", dir: true, seal: true})
	if nesting >= maxModuleNesting {
		return out
	}
	for _, m := range b.moduleGitDirs(modules) {
		if real, err := fsview.Realpath(b.in.FS, m); err == nil {
			if n := b.t.get(real, true); !n.reopen { // reached once more through a worktree
				b.mark(n, "submodule git directory", func(n *node) { n.reopen = true })
			}
			out = append(out, b.gitDirProtects(m, nesting+1)...)
		}
	}
	return out
}

func (e gitEntry) protect(dir string) protect {
	return protect{abs: filepath.Join(dir, e.rel), why: "mandatory", dir: e.dir, readable: !e.dir, content: e.content}
}

// moduleGitDirs lists the git directories under a modules directory: one
// holding any of gitMarkers is one (and is not walked further); any other
// is walked, to maxModuleDepth levels. Symlinks are not followed.
func (b *builder) moduleGitDirs(modules string) []string {
	var out []string
	var walk func(d string, level int)
	walk = func(d string, level int) {
		ents, err := b.in.FS.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(d, e.Name())
			switch {
			case b.isGitDir(p):
				out = append(out, p)
			case level < maxModuleDepth:
				walk(p, level+1)
			}
		}
	}
	walk(modules, 1)
	return out
}

func (b *builder) isGitDir(p string) bool {
	for _, m := range gitMarkers {
		if _, err := b.in.FS.Lstat(filepath.Join(p, m)); err == nil {
			return true
		}
	}
	return false
}

// enclosingRepo protects the git directory of the repository the working
// directory lies in, when that is not the working directory's own: the
// nearest .git above it, where something in it may be written.
func (b *builder) enclosingRepo() []protect {
	if b.in.Cwd == "/" {
		return nil
	}
	for d := filepath.Dir(b.in.Cwd); ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if _, err := b.in.FS.Lstat(g); err == nil {
			real, err := fsview.Realpath(b.in.FS, g)
			if err != nil || !b.anyWritableUnder(real) {
				return nil
			}
			return b.gitProtects(g)
		}
		if d == "/" {
			return nil
		}
	}
}
