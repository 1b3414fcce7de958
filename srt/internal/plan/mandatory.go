package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
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

// mandatory lists the always-protected paths: in $HOME, in the repository
// around the working directory, in the working directory, and below it and
// every other directory the command may write (scan.go). $HOME's come
// first: where the working directory is $HOME, their placeholders are the
// ones used.
func (b *builder) mandatory() []protect {
	out := b.homeProtects()
	out = append(out, b.globalHooksPath()...)
	out = append(out, b.enclosingRepo()...)
	cwd := b.in.Cwd
	if real, err := fsview.Realpath(b.in.FS, cwd); err == nil {
		cwd = real // the rules' nodes are real paths
	}
	if b.anyWritableUnder(cwd) {
		for _, s := range cwdProtects {
			out = append(out, s.protect(cwd))
		}
		out = append(out, b.gitProtects(filepath.Join(cwd, ".git"))...)
	}
	have := map[string]bool{}
	for _, pr := range out {
		have[pr.abs] = true
	}
	return append(out, b.scan(cwd, b.scanRoots(cwd), have)...)
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
