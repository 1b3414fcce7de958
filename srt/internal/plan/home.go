package plan

import (
	"path/filepath"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// homeStartup are the start-up files of shells and tools in $HOME: each is
// protected whenever the rules would let the command write it ($HOME, or a
// directory above it, is writable), whatever the working directory. A
// missing one gets a placeholder; missing directories above it get writable
// placeholders, so that protecting ~/.ssh/config does not make a missing
// ~/.ssh or ~/.config read-only for the tools that keep files there.
//
// The list stops the common start-up files, not every way a writable home
// reaches the host: programs installed in directories on PATH (~/.local/bin,
// ~/bin, ~/.cargo/bin), Python's site-packages (.pth files) and the
// configuration of less common tools are not in it (see docs/security.md).
// Each entry costs a mount in every run that may write $HOME, and a missing
// one a placeholder created and removed on the host.
var homeStartup = []startup{
	// Shells.
	{rel: ".bashrc", why: "every interactive bash"},
	{rel: ".bash_profile", content: bashProfile, why: "bash login shells"},
	{rel: ".bash_login", content: bashLogin, why: "bash login shells without .bash_profile"},
	{rel: ".profile", why: "sh, dash and bash login shells, display managers"},
	{rel: ".bash_logout", why: "bash login shells, at exit"},
	{rel: ".bash_aliases", why: "sourced by Debian's and Ubuntu's default .bashrc"},
	{rel: ".zshenv", why: "every zsh, scripts included"},
	{rel: ".zprofile", why: "zsh login shells"},
	{rel: ".zshrc", why: "interactive zsh"},
	{rel: ".zlogin", why: "zsh login shells"},
	{rel: ".zlogout", why: "zsh login shells, at exit"},
	{rel: ".config/fish", dir: true, why: "fish: config.fish, conf.d/ and functions/ run in every fish"},
	{rel: ".inputrc", why: "readline key bindings can type and run commands in every bash"},
	// Login sessions.
	{rel: ".xsessionrc", why: "sourced by Debian's X session start-up"},
	{rel: ".xprofile", why: "sourced by display managers at login"},
	{rel: ".xsession", why: "run as the session by Xsession, when the user chose it"},
	{rel: ".xinitrc", why: "startx runs it as the session"},
	{rel: ".config/autostart", dir: true, why: "desktop sessions start its entries at login"},
	{rel: ".config/systemd/user", dir: true, why: "systemd --user starts its units"},
	{rel: ".config/systemd/user.control", dir: true, why: "systemd --user: drop-ins of set-property, read beside user/"},
	{rel: ".config/systemd/user.conf", why: "systemd --user's manager settings (DefaultEnvironment)"},
	{rel: ".config/systemd/user.conf.d", dir: true, why: "drop-ins of user.conf"},
	{rel: ".local/share/systemd/user", dir: true, why: "systemd --user starts its units too (the XDG data path)"},
	{rel: ".config/environment.d", dir: true, why: "the environment of every systemd --user service (LD_PRELOAD)"},
	// git and ssh.
	{rel: ".gitconfig", why: "git: core.fsmonitor, core.hooksPath, aliases and filters run code in every repository"},
	{rel: ".config/git", dir: true, why: "git's XDG config and attributes, read beside ~/.gitconfig"},
	{rel: ".ssh/config", why: "ssh: ProxyCommand, LocalCommand and Match exec run commands"},
	{rel: ".ssh/rc", why: "sshd runs it at every login"},
	{rel: ".ssh/environment", why: "sshd sets it at login (PermitUserEnvironment)"},
	{rel: ".ssh/authorized_keys", why: "sshd lets its keys log in"},
	{rel: ".ssh/authorized_keys2", why: "sshd's second default AuthorizedKeysFile"},
	// Agents.
	{rel: ".claude", dir: true, why: "Claude Code: settings.json hooks, commands, agents, CLAUDE.md"},
	{rel: ".claude.json", content: "{}\n", why: "Claude Code: the MCP servers it starts"},
	{rel: ".mcp.json", content: mcpJSON, why: "MCP servers an agent started in ~ starts"},
	// Tools that run code from their configuration.
	{rel: ".npmrc", why: "npm: node-options and script-shell run code in every npm run"},
	{rel: ".cargo/config.toml", why: "cargo: build.rustc-wrapper runs a program in every build"},
	{rel: ".cargo/config", why: "cargo's older name for config.toml, read first when both exist"},
	{rel: ".config/go/env", why: "go: GOFLAGS=-toolexec runs a program in every go build and test"},
	{rel: ".gradle/init.d", dir: true, why: "gradle runs its init scripts in every build"},
	{rel: ".gradle/gradle.properties", why: "gradle: org.gradle.jvmargs (-javaagent) runs code in every build"},
	{rel: ".yarnrc.yml", why: "yarn 2+: yarnPath runs a script in every yarn command"},
	{rel: ".yarnrc", why: "yarn 1: yarn-path runs a script in every yarn command"},
	{rel: ".kube/config", why: "kubectl: a user's exec credential plugin runs in every kubectl command"},
	{rel: ".docker/cli-plugins", dir: true, why: "docker runs every plugin in it at each docker command"},
	{rel: ".gdbinit", why: "gdb: shell and python commands run at start"},
	{rel: ".config/gdb", dir: true, why: "gdb 11+: gdbinit (XDG)"},
	{rel: ".psqlrc", why: "psql: \\! runs a shell command at start"},
	{rel: ".irbrc", why: "irb runs it as Ruby"},
	{rel: ".config/direnv", dir: true, why: "direnv: direnvrc and lib/ run in every shell that enters a directory"},
	{rel: ".gnupg/gpg-agent.conf", why: "gpg-agent runs its pinentry-program"},
	{rel: ".vimrc", why: "vim"},
	{rel: ".exrc", why: "vi and vim read it when there is no .vimrc"},
	{rel: ".vim", dir: true, why: "vim: plugin/ and ftplugin/ run at start"},
	{rel: ".config/nvim", dir: true, why: "neovim: init.lua, plugin/"},
	{rel: ".local/share/nvim/site", dir: true, why: "neovim: plugin/ and pack/*/start/ on its runtime path"},
	{rel: ".emacs", why: "emacs"},
	{rel: ".emacs.d", dir: true, why: "emacs: init.el"},
	{rel: ".config/emacs", dir: true, why: "emacs 27+: init.el (XDG)"},
	{rel: ".tmux.conf", why: "tmux: run-shell and hooks"},
	{rel: ".config/tmux", dir: true, why: "tmux 3.1+: tmux.conf (XDG)"},
}

// The placeholders of bash's login files read the next file bash would
// have read without them: bash runs only the first of .bash_profile,
// .bash_login and .profile that exists, and an empty placeholder would
// hide the user's .profile from every login shell started meanwhile.
const (
	bashProfile = "# srt: placeholder while a sandbox runs; reads what bash would read without it\n" +
		"if [ -f \"$HOME/.bash_login\" ]; then . \"$HOME/.bash_login\"; elif [ -f \"$HOME/.profile\" ]; then . \"$HOME/.profile\"; fi\n"
	bashLogin = "# srt: placeholder while a sandbox runs; reads what bash would read without it\n" +
		"if [ -f \"$HOME/.profile\" ]; then . \"$HOME/.profile\"; fi\n"
)

// homeProtects lists the entries of homeStartup the rules would let the
// command write.
func (b *builder) homeProtects() []protect {
	home := b.in.Home
	if home == "" {
		return nil
	}
	var out []protect
	for _, s := range homeStartup {
		existing, _, err := fsview.ResolveExisting(b.in.FS, filepath.Join(home, s.rel))
		if err != nil || !b.t.writable(existing) {
			continue
		}
		pr := s.protect(home)
		pr.parents = true
		out = append(out, pr)
	}
	return out
}
