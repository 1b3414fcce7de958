package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// startup is a file or directory that is always write-protected where the
// rules would let the command write it: each makes a later host program run
// code (or follow instructions) the sandboxed command wrote.
type startup struct {
	rel string
	dir bool
	// content is what a missing file's placeholder holds, where an empty
	// file would mean something other than no file (bash stops looking
	// for a login file at the first that exists; a JSON reader fails on
	// an empty file).
	content string
	// readable: a missing file's placeholder reads as empty inside, for
	// files programs open whenever they exist (git warns on every
	// command about a .gitmodules it cannot open).
	readable bool
	why      string
}

// cwdProtects are protected in the working directory (missing ones get a
// placeholder); below it, down to mandatoryDenySearchDepth, where they
// exist (the directories one level less deep). The reference's list, with
// the whole of .claude.
var cwdProtects = []startup{
	{rel: ".gitconfig", why: "git config: core.fsmonitor, aliases and hooksPath run code"},
	{rel: ".gitmodules", readable: true, why: "submodule URLs and update commands"},
	{rel: ".bashrc", why: "bash"},
	{rel: ".bash_profile", why: "bash login shells"},
	{rel: ".zshrc", why: "zsh"},
	{rel: ".zprofile", why: "zsh login shells"},
	{rel: ".profile", why: "sh and bash login shells"},
	{rel: ".ripgreprc", why: "rg --pre runs a program on every file"},
	{rel: ".mcp.json", content: mcpJSON, why: "MCP servers an agent starts"},
	{rel: ".vscode", dir: true, why: "tasks and settings run commands"},
	{rel: ".idea", dir: true, why: "run configurations and file watchers"},
	// The whole directory, existing or not (the reference protects only
	// commands/ and agents/ and leaves settings.json writable): its
	// settings.json and settings.local.json hooks run commands on the
	// host, and the rest are prompts and agents Claude Code follows.
	{rel: ".claude", dir: true, why: "Claude Code: settings hooks, commands, agents"},
}

// mcpJSON is the placeholder of a missing .mcp.json: no servers, and valid
// JSON for the agent on the host that reads it while the sandbox runs.
const mcpJSON = "{\"mcpServers\":{}}\n"

// maxScanEntries bounds the mandatory-deny walk; past it srt warns that
// deeper files were not looked at.
const maxScanEntries = 50000

// mandatory lists the always-protected paths: in $HOME, in the repository
// around the working directory, in the working directory and below it.
// $HOME's come first: where the working directory is $HOME, their
// placeholders are the ones used.
func (b *builder) mandatory() []protect {
	out := b.homeProtects()
	out = append(out, b.globalHooksPath()...)
	out = append(out, b.enclosingRepo()...)
	cwd := b.in.Cwd
	if !b.anyWritableUnder(cwd) {
		return out // nothing here can be written: nothing to protect
	}
	for _, s := range cwdProtects {
		out = append(out, s.protect(cwd))
	}
	out = append(out, b.gitProtects(filepath.Join(cwd, ".git"))...)
	return append(out, b.scan(cwd)...)
}

func (s startup) protect(dir string) protect {
	return protect{abs: filepath.Join(dir, s.rel), why: "mandatory", dir: s.dir, content: s.content, readable: s.readable}
}

// anyWritableUnder says whether dir or anything beneath it may be written.
func (b *builder) anyWritableUnder(dir string) bool {
	if b.t.writable(dir) {
		return true
	}
	for p, n := range b.t.nodes {
		if n.writeAllow && strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// scan walks below the working directory for existing protected files (at
// most depth components deep), protected directories and repositories
// (one level less), skipping node_modules. Every entry named .git is a
// repository, whatever is in it: a command could move any file srt looked
// for aside for one run. Directories it cannot list while they are
// writable are protected whole.
func (b *builder) scan(cwd string) []protect {
	depthLimit := b.in.Config.MandatoryDenySearchDepth
	var out []protect
	seen := 0
	byName := map[string]startup{}
	for _, s := range cwdProtects {
		byName[s.rel] = s
	}
	var walk func(dir string, level int)
	walk = func(dir string, level int) {
		if seen > maxScanEntries {
			return
		}
		ents, err := b.in.FS.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && b.t.writable(dir) && dir != cwd {
				out = append(out, protect{abs: dir, why: "mandatory (unlistable)"})
			}
			return
		}
		for _, e := range ents {
			seen++
			if level == 1 {
				continue // the working directory's own entries are handled by mandatory()
			}
			name := e.Name()
			p := filepath.Join(dir, name)
			link := e.Type()&fs.ModeSymlink != 0
			s, known := byName[name]
			switch {
			case name == ".git" && level < depthLimit:
				out = append(out, b.gitProtects(p)...)
			case known && s.dir && (e.IsDir() || link) && level < depthLimit:
				out = append(out, protect{abs: p, why: "mandatory", dir: true})
			case known && !s.dir && (e.Type().IsRegular() || link):
				out = append(out, protect{abs: p, why: "mandatory"})
			}
		}
		if level >= depthLimit {
			return
		}
		for _, e := range ents {
			if e.IsDir() && e.Name() != "node_modules" && e.Name() != ".git" {
				walk(filepath.Join(dir, e.Name()), level+1)
			}
		}
	}
	walk(cwd, 1)
	if seen > maxScanEntries {
		b.warn("stopped looking for protected files (.bashrc, .git/hooks, …) under %s after %d entries; deeper ones are not write-protected", cwd, maxScanEntries)
	}
	return out
}
