package plan

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// mandatoryHost is the filesystem of the mandatory-protection golden cases:
// a repository with a linked worktree, submodules (one with a slash in its
// name, one whose files were moved aside), a nested repository without
// HEAD, a submodule checkout's .git file, a .claude directory, a symlinked
// and a hard-linked protected name, and a home with start-up files.
func mandatoryHost() *fsview.Mem {
	return fsview.NewMem(map[string]string{
		"/usr/bin/bash":              "file",
		"/usr/local/bin/srt-init":    "file",
		"/proc/cpuinfo":              "file 0444",
		"/sys/kernel":                "dir",
		"/home/u/.bashrc":            "-> dotfiles/bashrc",
		"/home/u/dotfiles/bashrc":    "file",
		"/home/u/.profile":           "file",
		"/home/u/.gitconfig":         "links 2",
		"/home/u/.config/gh/hosts":   "file",
		"/home/u/.config/git/config": "text [user]\n\tname = u\n[core]\n\thooksPath = ~/.githooks\n",
		"/home/u/.githooks/pre-push": "file",

		"/home/u/proj/.git/HEAD":                      "file",
		"/home/u/proj/.git/config":                    "text [core]\n\tbare = false\n\thooksPath = .husky # husky\n",
		"/home/u/proj/.husky/pre-commit":              "file",
		"/home/u/proj/.git/hooks/pre-commit.sample":   "file",
		"/home/u/proj/.git/info/exclude":              "file",
		"/home/u/proj/.git/branches":                  "dir",
		"/home/u/proj/.git/objects/info":              "dir",
		"/home/u/proj/.git/refs/heads/main":           "file",
		"/home/u/proj/.git/worktrees/wt/HEAD":         "file",
		"/home/u/proj/.git/worktrees/wt/commondir":    "text ../..\n",
		"/home/u/proj/.git/worktrees/wt/gitdir":       "text /home/u/wt/.git\n",
		"/home/u/wt/.git":                             "text gitdir: /home/u/proj/.git/worktrees/wt\n",
		"/home/u/wt/README":                           "file",
		"/home/u/proj/.git/modules/lib/HEAD":          "file",
		"/home/u/proj/.git/modules/lib/config":        "file",
		"/home/u/proj/.git/modules/lib/hooks":         "dir",
		"/home/u/proj/.git/modules/lib/objects/info":  "dir",
		"/home/u/proj/.git/modules/libs/deep/HEAD":    "file",
		"/home/u/proj/.git/modules/libs/deep/config":  "file",
		"/home/u/proj/.git/modules/moved/stash/notes": "file",
		"/home/u/proj/lib/.git":                       "text gitdir: ../.git/modules/lib\n",
		"/home/u/proj/nested/.git/hooks":              "dir",
		"/home/u/proj/.claude/settings.json":          "file",
		"/home/u/proj/deploy.sh":                      "-> scripts/deploy.sh",
		"/home/u/proj/scripts/deploy.sh":              "file",
		"/home/u/proj/data.txt":                       "links 2",
		"/home/u/proj/src/main.go":                    "file",
	})
}

func TestGoldenMandatory(t *testing.T) {
	const (
		cwd  = `"allowWrite":["."],"denyWrite":[]`
		home = `"allowWrite":["~"],"denyWrite":[]`
	)
	cases := []struct {
		name, fs, top, cwd string
	}{
		// Items 4, 9, 17: every part of .git git reads as config, a
		// pointer or code; the hooks directory core.hooksPath names;
		// worktrees' pointers; modules/ sealed, the git directories in it
		// reopened and protected in turn, the one whose files were moved
		// aside left sealed; the nested .git without HEAD and the .git
		// file; the whole of .claude.
		{"mandatory-git", cwd, "", ""},
		// allowGitConfig opens config, and only config, in every git
		// directory.
		{"mandatory-allow-git-config", cwd + `,"allowGitConfig":true`, "", ""},
		// Item 12: $HOME writable: its start-up files (and the global
		// core.hooksPath), missing ones
		// behind placeholders (writable ones above them), ~/.bashrc a
		// symlink (item 8), ~/.gitconfig hard-linked (item 10).
		{"mandatory-home", home, "", ""},
		// $HOME not writable: none of them.
		{"mandatory-home-readonly", cwd, "", ""},
		// Items 8 and 10 for denyWrite.
		{"mandatory-names", `"allowWrite":["."],"denyWrite":["deploy.sh","data.txt"]`, "", ""},
		// The working directory is a linked worktree: its .git file, and
		// the repository it points to where that may be written.
		{"mandatory-linked-worktree", `"allowWrite":[".","/home/u/proj/.git"],"denyWrite":[]`, `"mandatoryDenySearchDepth":1`, "/home/u/wt"},
		// The repository around the working directory.
		{"mandatory-enclosing", `"allowWrite":["/home/u/proj"],"denyWrite":[]`, `"mandatoryDenySearchDepth":1`, "/home/u/proj/src"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := `{"denyRead":[],` + c.fs + `}`
			doc := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + fs
			if c.top != "" {
				doc += "," + c.top
			}
			cfg, err := settings.Parse([]byte(doc + "}"))
			if err != nil {
				t.Fatal(err)
			}
			dir := "/home/u/proj"
			if c.cwd != "" {
				dir = c.cwd
			}
			p, err := Build(Input{Config: cfg, FS: mandatoryHost(), Cwd: dir, Home: "/home/u", UID: 1000, TmpDir: PrivateTmp,
				Command: []string{"/usr/bin/bash", "-c", "true"}})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, p.String())
		})
	}
}

// TestNoPlaceholderBeneathProtected: a placeholder beneath a read-only
// placeholder directory is not made (nothing could be created there), also
// when a sibling whose name sorts between them (".config-x") is one too.
func TestNoPlaceholderBeneathProtected(t *testing.T) {
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["~"],"denyWrite":["~/.config","~/.config-x/y"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	fs := fsview.NewMem(map[string]string{"/home/w/proj": "dir", "/usr/bin/bash": "file", "/proc/cpuinfo": "file 0444", "/sys/kernel": "dir"})
	p, err := Build(Input{Config: cfg, FS: fs, Cwd: "/home/w/proj", Home: "/home/w", UID: 1000, Command: []string{"/usr/bin/bash", "-c", "true"}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ph := range p.Placeholders {
		seen[ph.Path] = true
		if strings.HasPrefix(ph.Path, "/home/w/.config/") || strings.HasPrefix(ph.Path, "/home/w/.config-x/") {
			t.Errorf("placeholder %s beneath a read-only placeholder directory", ph.Path)
		}
	}
	if !seen["/home/w/.config"] || !seen["/home/w/.config-x"] {
		t.Fatalf("the denyWrite placeholders are missing:\n%s", p)
	}
	for _, m := range p.Mounts {
		if m.Path == "/home/w/.config" && m.View == HostRW {
			t.Fatal("~/.config is writable: the denyWrite must win over a writable parent placeholder")
		}
	}
}
