//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The independent hostile review of issue 10: attacks that are not among
// the 21 findings, written before the fixes. TestReviewEscape…
// tests try an attack that got out on main at 32e0ef5 (each is closed now,
// and the test keeps it closed); TestReviewHolds… tests guard an attack
// that was refused then too. Each has a control that shows the attack
// code works where the protection is lifted. The review's other findings
// are tested where they were fixed: escape_stdio_test.go (an inherited
// datagram socket), escape_scan_test.go, escape_denyglob_test.go.

// touchCmd is the shell command a planted hook or fsmonitor runs.
func touchCmd(marker string) string { return "touch " + marker }

// TestReviewEscapeNpmLogsSymlink: srt makes ~/.npm/_logs writable by
// default, resolving it as it finds it. A command that may write ~/.npm
// (allowWrite ["~/.npm"], the usual grant for npm's cache) replaces _logs
// by a symlink to any directory; the next run with the same settings
// mounts that directory writable (Landlock grants it too). Under a
// root-run srt the target can be /etc. Not items 7/14 (those are the
// allow lists of the settings): this is srt's own default write path.
func TestReviewEscapeNpmLogsSymlink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/.npm")
		outside := w.mkdir("home/outside")
		s := fsSettings(`{"denyRead":[],"allowWrite":["~/.npm"],"denyWrite":[]}`)
		// Before the plant: outside is read-only.
		want(t, w.probe(s, "write-file", outside+"/planted", "x"), "create", refused("EROFS"))
		// Run 1 plants the link (it may: ~/.npm is writable).
		want(t, w.probe(s, "plant-link", outside, w.home+"/.npm/_logs"), "plant-link", "ok")
		// Run 2, same settings.
		p := w.probe(s, "write-file", outside+"/planted", "x")
		if exists(outside + "/planted") {
			t.Errorf("ESCAPE: a symlink planted at ~/.npm/_logs made %s writable in the next run\n%s", outside, p.result)
		}
		want(t, p, "create", refused("EROFS"))
		// Control: the create code works where writes are allowed.
		want(t, w.probe(s, "write-file", w.home+"/.npm/ok", "x"), "create", "ok")
	})
}

// TestReviewEscapeSubmoduleGitFile: the scan protects nested repositories
// whose .git is a directory, but a submodule's checkout has a .git FILE
// ("gitdir: ../.git/modules/lib"). The command points it at a directory it
// wrote with core.fsmonitor set; the host's next `git status` in the
// superproject recurses into the submodule and runs the command, as the
// user (as root under a root srt). Item 4 covers redirections under .git;
// this one is in the working tree.
func TestReviewEscapeSubmoduleGitFile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		lib := w.mkdir("home/lib")
		w.gitOnHostOK(lib, "init", "-q")
		w.write("home/lib/f", "x")
		w.gitOnHostOK(lib, "add", "f")
		w.gitOnHostOK(lib, "commit", "-qm", "lib")
		w.gitOnHostOK(w.dir, "init", "-q")
		w.gitOnHostOK(w.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "lib")
		w.gitOnHostOK(w.dir, "commit", "-qm", "with submodule")
		mark := w.markFile("fsmonitor-ran")
		attack := `mkdir .evil && cp -r .git/modules/lib/. .evil/ && git config -f .evil/config core.fsmonitor "` + touchCmd(mark) + `; false" && ` +
			`git config -f .evil/config core.worktree ../lib && exec "$PROBE" write-file lib/.git "gitdir: ../.evil"`
		p := w.probeShell(fsSettings(writeCwd), attack)
		w.gitOnHost(w.dir, "status")
		if exists(mark) {
			t.Errorf("ESCAPE: the host's git status ran the fsmonitor planted through the submodule's .git file\n%s", p.result)
		}
		want(t, p, "create", refused("EROFS"))

		// Control: the fsmonitor mechanism runs on the host when the
		// repository's own config may be written (allowGitConfig).
		w.write("home/proj/lib/.git", "gitdir: ../.git/modules/lib\n")
		os.Remove(mark)
		open := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[],"allowGitConfig":true}`)
		expect(t, w.sh(open, `git config core.fsmonitor "`+touchCmd(mark)+`; false"`), 0)
		w.gitOnHost(w.dir, "status")
		if !exists(mark) {
			t.Fatal("control: the fsmonitor planted in .git/config did not run on the host")
		}
	})
}

// TestReviewEscapeHooksPath: with core.hooksPath pointing into the working
// tree (husky's `.husky`, lefthook, a `.githooks` directory), git runs its
// hooks from files the command may write: .git/hooks is protected, the
// hooks git actually runs are not. The host's next `git commit` runs a
// pre-commit the command wrote.
func TestReviewEscapeHooksPath(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.mkdir("home/proj/.husky")
		w.gitOnHostOK(w.dir, "config", "core.hooksPath", ".husky")
		mark := w.markFile("hook-ran")
		hook := "#!/bin/sh\n" + touchCmd(mark) + "\n"
		// The default hooks directory is protected: the rule the attack
		// routes around.
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.dir+"/.git/hooks/pre-commit", hook), "create", refused("EROFS"))
		p := w.probe(fsSettings(writeCwd), "write-file", w.dir+"/.husky/pre-commit", hook)
		w.write("home/proj/a", "a")
		w.gitOnHostOK(w.dir, "add", "a")
		w.gitOnHost(w.dir, "commit", "-qm", "a")
		if exists(mark) {
			t.Errorf("ESCAPE: the host's git commit ran a pre-commit hook written in the sandbox (core.hooksPath=.husky)\n%s", p.result)
		}
		want(t, p, "create", refused("EROFS"))

		// Control: a hook at core.hooksPath runs on the host.
		w.write("home/proj/.husky/pre-commit", hook)
		os.Chmod(w.dir+"/.husky/pre-commit", 0o755)
		os.Remove(mark)
		w.write("home/proj/b", "b")
		w.gitOnHostOK(w.dir, "add", "b")
		w.gitOnHost(w.dir, "commit", "-qm", "b")
		if !exists(mark) {
			t.Fatal("control: the hook at core.hooksPath did not run on the host")
		}
	})
}

// TestReviewEscapeHomeStartupFiles: with the working directory at $HOME
// (an agent started in ~) and allowWrite ["."], the mandatory list
// protects .bashrc and .gitconfig but not other files that make a later
// host program run code: .zshenv (every zsh), .zlogin, .bash_login (bash
// reads it when .bash_profile is missing), .bash_logout, ~/.ssh/rc (sshd
// runs it at login) and ~/.config/git/config (git's XDG global config,
// read beside ~/.gitconfig: core.fsmonitor runs in every repository).
func TestReviewEscapeHomeStartupFiles(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.dir = w.home
		w.write("home/.bashrc", "# user\n")
		w.write("home/.gitconfig", "# user\n")
		w.write("home/.zshenv", "# user\n")
		w.write("home/.config/git/config", "# user\n")
		w.mkdir("home/.ssh")
		// Control: the protected names are refused.
		want(t, w.probe(fsSettings(writeCwd), "write", w.home+"/.bashrc"), "write", refused("EROFS"))
		want(t, w.probe(fsSettings(writeCwd), "write", w.home+"/.gitconfig"), "write", refused("EROFS"))
		// A missing one is a placeholder: unreadable (EACCES), or read-only
		// where it holds content srt wrote for the host's shells (EROFS).
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.home+"/.bash_profile", "x"), "create", refused("EROFS"))
		var escaped []string
		for _, f := range []string{".zshenv", ".config/git/config"} {
			p := w.probe(fsSettings(writeCwd), "write", filepath.Join(w.home, f))
			if p.steps["write"] != refused("EROFS") {
				escaped = append(escaped, f+": "+p.steps["write"])
			}
		}
		for _, f := range []string{".bash_login", ".bash_logout", ".zlogin", ".ssh/rc"} {
			p := w.probe(fsSettings(writeCwd), "write-file", filepath.Join(w.home, f), "x")
			if o := p.steps["create"]; o != "EACCES" && o != "EROFS" {
				escaped = append(escaped, f+": "+o)
			}
		}
		if len(escaped) > 0 {
			t.Errorf("ESCAPE: start-up files in $HOME writable with the working directory at $HOME: %s", strings.Join(escaped, ", "))
		}
	})
}

// TestReviewEscapeSettingsFile: srt does not protect the settings file it
// loaded. Where the command may write it (the default ~/.srt-settings.json
// with the working directory at $HOME, or a project's own settings file
// passed with -s), it rewrites it with "filesystem.disabled", and the next
// run has no filesystem rules at all.
func TestReviewEscapeSettingsFile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		outside := w.mkdir("outside")
		open := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
		for _, c := range []struct {
			name, dir, file string
			args            []string
		}{
			{"default", w.home, w.home + "/.srt-settings.json", nil},
			{"project", w.dir, w.dir + "/.srt.json", []string{"-s", w.dir + "/.srt.json"}},
		} {
			w.dir = c.dir
			w.write(strings.TrimPrefix(c.file, w.root+"/"), fsSettings(writeCwd))
			run := func(args ...string) probeRun {
				return newProbeRun(w.srt(append(append(append([]string{}, c.args...), "--", probeBin(t)), args...)...))
			}
			// Control: outside is read-only under these settings.
			want(t, run("write-file", outside+"/"+c.name, "x"), "create", refused("EROFS"))
			p := run("write-file", c.file, open)
			after := run("write-file", outside+"/"+c.name, "x")
			if exists(outside + "/" + c.name) {
				t.Errorf("ESCAPE (%s settings file %s): the command rewrote srt's settings and the next run wrote outside allowWrite\n%s", c.name, c.file, p.result)
				continue
			}
			want(t, p, "create", refused("EROFS"))
			want(t, after, "create", refused("EROFS"))
		}
	})
}

// TestReviewHoldsWeakerProcRoot: with enableWeakerNestedSandbox the host's
// /proc is visible, but /proc/<host pid>/root (and environ, mem) of a host
// process of the same user cannot be followed: Landlock's ptrace scope
// refuses access to processes outside the sandbox's domain (EACCES).
func TestReviewHoldsWeakerProcRoot(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		secret := w.write("home/vault/key", "SECRET-WEAK-9a1f")
		s := withTop(fsSettings(`{"denyRead":["~/vault"],"allowWrite":["."],"denyWrite":[]}`), `"enableWeakerNestedSandbox":true`)
		marker, _ := w.hostMarker()
		pid := strconv.Itoa(marker.Process.Pid)
		p := w.probe(s, "read-proc-root", pid, secret)
		noLeak(t, p, "SECRET-WEAK-9a1f")
		want(t, p, "read-proc-root@"+pid, "EACCES")
		p = w.probe(s, "read", "/proc/"+pid+"/environ")
		want(t, p, "read", "EACCES")
		// Control: outside the sandbox the same code reads it.
		expect(t, w.hostProbe("read-proc-root", pid, secret).result, 0, "SECRET-WEAK-9a1f")
	})
}

// TestReviewHoldsRootCapabilities: uid 0 inside a root-run sandbox has an
// empty bounding set, so exec of any program (setuid or file-capability
// included) gains nothing, and new namespaces are refused.
func TestReviewHoldsRootCapabilities(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		skipOnLandlock(t)
		r := w.sh(fsSettings(writeCwd), `grep -E '^Cap(Bnd|Eff|Prm)' /proc/self/status; unshare -n true 2>/dev/null; echo unshare=$?`)
		expect(t, r, 0, "CapBnd:\t0000000000000000", "CapEff:\t0000000000000000", "unshare=1")
		// Control: the host's bounding set of the same user is not empty.
		if data, _ := os.ReadFile("/proc/self/status"); !strings.Contains(string(data), "CapBnd:\t000001") {
			t.Fatalf("control: the test process's bounding set is empty")
		}
	})
}

// TestReviewEscapeClaudeSettingsLocal: item 9 names .claude/settings.json;
// .claude/settings.local.json holds the same hooks (commands Claude Code
// runs on the host) and is as writable when .claude exists.
func TestReviewEscapeClaudeSettingsLocal(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/.claude")
		// Control: .claude/commands is refused (all of .claude is
		// read-only since issue 10, item 9).
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.dir+"/.claude/commands", "x"), "create", refused("EROFS"))
		p := w.probe(fsSettings(writeCwd), "write-file", w.dir+"/.claude/settings.local.json", `{"hooks":{}}`)
		// A placeholder (EACCES) or a read-only .claude (EROFS).
		if o := p.steps["create"]; o != "EACCES" && o != "EROFS" {
			t.Fatalf("ESCAPE: .claude/settings.local.json was written (%s)\n%s", o, p.result)
		}
	})
}

// TestReviewEscapeRootSetuid: uid 0 inside a root-run sandbox is uid 0 on
// the host, and may set the setuid and setgid bits on files it owns
// (chmod, or the mode of open(O_CREAT)). The bind mounts inside are
// nosuid, but on the host the file is a setuid-root program: any local
// user who can reach the writable directory runs it as root. A user-run
// sandbox can only make setuid-<user> files, which give nothing.
func TestReviewEscapeRootSetuid(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		os.Chmod(w.path("home"), 0o755)
		planted := w.dir + "/tool"
		p := w.probe(fsSettings(writeCwd), "review-setid", planted)
		for _, f := range []string{planted, planted + ".creat"} {
			fi, err := os.Stat(f)
			if err != nil {
				continue
			}
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode()&os.ModeSetuid != 0 && st.Uid == 0 || fi.Mode()&os.ModeSetgid != 0 && st.Gid == 0 {
				// Show what it gives: the unprivileged test user runs it.
				cmd := exec.Command(f, "whoami")
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
				out, _ := cmd.CombinedOutput()
				t.Errorf("ESCAPE: the sandbox left a setuid/setgid root program on the host: %s (%v); run by nobody: %s\n%s", f, fi.Mode(), out, p.result)
			}
		}
		if w.r.uid == 0 {
			want(t, p, "copy", "ok", "chmod-setid", "EPERM", "creat-setid", "EPERM")
		}
	})
}
