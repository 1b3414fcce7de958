package plan

import (
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// A command that may write a directory can put a symlink there under a
// protected name (sub/.vscode -> /, sub/.claude -> ..): the next run would
// protect what the link points to, and protecting "/" or a directory that
// holds the working directory makes every later run read-only. Such a
// protection is ignored, with a warning naming the link; the link itself
// can never be protected (a mount cannot be placed on a symlink), and what
// it points to is no more writable than the rules make it. A protected
// link to anywhere else (.vscode -> /etc) still protects its target: that
// costs nothing but the target's writability.

// holdsWriteRoot says whether p is "/", or the working directory, or a
// directory allowWrite grants (or a default write path), or one above it.
func (b *builder) holdsWriteRoot(p string) bool {
	if b.holdsCwd(p) {
		return true
	}
	for q, n := range b.t.nodes {
		if n.writeAllow && fsview.IsWithin(q, p) {
			return true
		}
	}
	return false
}

// holdsCwd says whether p is the working directory or above it ("/" is).
func (b *builder) holdsCwd(p string) bool {
	cwd := b.in.Cwd
	if real, err := fsview.Realpath(b.in.FS, cwd); err == nil {
		cwd = real
	}
	return fsview.IsWithin(cwd, p)
}

// warnLinkToWriteRoot says that a protection is ignored because it leads
// through symlinks to a directory that holds a writable one.
func (b *builder) warnLinkToWriteRoot(pr protect, links []string, target string) {
	what := pr.rule()
	if pr.mandatory() {
		what = "srt always protects " + pr.abs + ", but it"
	}
	b.warn("%s leads through the symlink %s to %s, which holds the working directory or a directory allowWrite grants; srt does not write-protect it, which would make them read-only in every run; remove the link", what, strings.Join(links, " and "), target)
}

// warnGitToCwd says that a .git link or file that leads to a directory
// holding the working directory is not taken for a repository.
func (b *builder) warnGitToCwd(gitPath, target string) {
	b.warn("%s leads to %s, which holds the working directory; srt does not take it for a git directory (it would write-protect and put placeholders in that directory's config, hooks and other entries); remove %s", gitPath, target, gitPath)
}
