package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Files and directories that are always write-protected when they sit in the
// working directory (or, for existing ones, below it down to
// mandatoryDenySearchDepth): each can make a later host-side program run
// code the sandboxed command wrote.
var (
	// Shell and tool start-up files, and the MCP server list.
	protectedFiles = []string{
		".gitconfig",  // git config: core.fsmonitor, aliases, hooksPath run code
		".gitmodules", // submodule URLs and update commands
		".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
		".ripgreprc", // rg --pre runs a program on every file
		".mcp.json",  // MCP servers an agent starts
	}
	// Editor and agent directories whose contents run as tasks or prompts.
	protectedDirs = []string{".vscode", ".idea", ".claude/commands", ".claude/agents"}
)

// maxScanEntries bounds the mandatory-deny walk; past it srt warns that
// deeper files were not looked at.
const maxScanEntries = 50000

// protect records a path that must not be written. Existing paths get a
// read-only mount; a missing one gets a placeholder when it could otherwise
// be created.
type protect struct {
	abs, why string
}

// mandatory lists the protected paths under the working directory.
func (b *builder) mandatory() []protect {
	cwd := b.in.Cwd
	if !b.anyWritableUnder(cwd) {
		return nil // nothing here can be written: nothing to protect
	}
	var out []protect
	add := func(p, why string) { out = append(out, protect{abs: p, why: why}) }
	for _, f := range protectedFiles {
		add(filepath.Join(cwd, f), "mandatory")
	}
	for _, d := range protectedDirs {
		add(filepath.Join(cwd, d), "mandatory")
	}
	out = append(out, b.gitProtects(filepath.Join(cwd, ".git"), true)...)
	out = append(out, b.scan(cwd)...)
	return out
}

// gitProtects protects a repository's hooks and config. A .git file (a
// worktree or submodule pointer) is protected itself; a missing .git gives
// nothing.
func (b *builder) gitProtects(gitPath string, top bool) []protect {
	fi, err := b.in.FS.Lstat(gitPath)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return []protect{{abs: gitPath, why: "mandatory"}}
	}
	out := []protect{{abs: filepath.Join(gitPath, "hooks"), why: "mandatory"}}
	if !b.in.Config.Filesystem.AllowGitConfig {
		out = append(out, protect{abs: filepath.Join(gitPath, "config"), why: "mandatory"})
	}
	return out
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
// most depth components deep), protected directories and nested
// repositories (one level less), skipping node_modules. Directories it
// cannot list while they are writable are protected whole.
func (b *builder) scan(cwd string) []protect {
	depthLimit := b.in.Config.MandatoryDenySearchDepth
	var out []protect
	seen := 0
	files := map[string]bool{}
	for _, f := range protectedFiles {
		files[f] = true
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
			name := e.Name()
			p := filepath.Join(dir, name)
			if level == 1 {
				continue // the working directory's own entries are handled by mandatory()
			}
			switch {
			case e.Type().IsRegular() && files[name]:
				out = append(out, protect{abs: p, why: "mandatory"})
			case e.IsDir() && level < depthLimit && (name == ".vscode" || name == ".idea"):
				out = append(out, protect{abs: p, why: "mandatory"})
			case e.IsDir() && level < depthLimit && name == ".claude":
				for _, sub := range []string{"commands", "agents"} {
					if _, err := b.in.FS.Lstat(filepath.Join(p, sub)); err == nil {
						out = append(out, protect{abs: filepath.Join(p, sub), why: "mandatory"})
					}
				}
			case e.IsDir() && level < depthLimit && name == ".git":
				if _, err := b.in.FS.Lstat(filepath.Join(p, "HEAD")); err == nil {
					out = append(out, b.gitProtects(p, false)...)
				}
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
