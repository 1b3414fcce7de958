package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The independent hostile review of issue 10: attacks that are not among
// the 21 findings. TestReviewEscape… tests try an attack that got
// out when they were written (they fail until it is closed);
// TestReviewHolds… tests guard an attack that was refused. Each has a
// control that shows the attack code works where the protection is lifted.

const reviewWriteCwd = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`

// hostGit runs git on the host (no sandbox) as the runner, in dir, with the
// workspace's home and nothing from the system's git configuration.
func (w *workspace) hostGit(dir string, args ...string) (string, error) {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = w.env("GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	w.asRunner(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustGit is hostGit that fails the test on an error.
func (w *workspace) mustGit(dir string, args ...string) {
	w.t.Helper()
	if out, err := w.hostGit(dir, args...); err != nil {
		w.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// marker is a file a planted command creates when it runs on the host; it
// lives in a directory of the runner's beside home, which no sandbox of
// these tests may write.
func (w *workspace) marker(name string) string {
	p := filepath.Join(w.mkdir("marks"), name)
	os.Remove(p)
	return p
}

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
		want(t, w.probe(s, "write-file", outside+"/planted", "x"), "create", "EROFS")
		// Run 1 plants the link (it may: ~/.npm is writable).
		want(t, w.probe(s, "plant-link", outside, w.home+"/.npm/_logs"), "plant-link", "ok")
		// Run 2, same settings.
		p := w.probe(s, "write-file", outside+"/planted", "x")
		if exists(outside + "/planted") {
			t.Errorf("ESCAPE: a symlink planted at ~/.npm/_logs made %s writable in the next run\n%s", outside, p.result)
		}
		want(t, p, "create", "EROFS")
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
		w.mustGit(lib, "init", "-q")
		w.write("home/lib/f", "x")
		w.mustGit(lib, "add", "f")
		w.mustGit(lib, "commit", "-qm", "lib")
		w.mustGit(w.dir, "init", "-q")
		w.mustGit(w.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "lib")
		w.mustGit(w.dir, "commit", "-qm", "with submodule")
		mark := w.marker("fsmonitor-ran")
		attack := `mkdir .evil && cp -r .git/modules/lib/. .evil/ && git config -f .evil/config core.fsmonitor "` + touchCmd(mark) + `; false" && ` +
			`git config -f .evil/config core.worktree ../lib && exec "$PROBE" write-file lib/.git "gitdir: ../.evil"`
		p := w.probeShell(reviewWriteCwd, attack)
		w.hostGit(w.dir, "status")
		if exists(mark) {
			t.Errorf("ESCAPE: the host's git status ran the fsmonitor planted through the submodule's .git file\n%s", p.result)
		}
		want(t, p, "create", "EROFS")

		// Control: the fsmonitor mechanism runs on the host when the
		// repository's own config may be written (allowGitConfig).
		w.write("home/proj/lib/.git", "gitdir: ../.git/modules/lib\n")
		os.Remove(mark)
		open := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[],"allowGitConfig":true}`)
		expect(t, w.sh(open, `git config core.fsmonitor "`+touchCmd(mark)+`; false"`), 0)
		w.hostGit(w.dir, "status")
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
		w.mustGit(w.dir, "init", "-q")
		w.mkdir("home/proj/.husky")
		w.mustGit(w.dir, "config", "core.hooksPath", ".husky")
		mark := w.marker("hook-ran")
		hook := "#!/bin/sh\n" + touchCmd(mark) + "\n"
		// The default hooks directory is protected: the rule the attack
		// routes around.
		want(t, w.probe(reviewWriteCwd, "write-file", w.dir+"/.git/hooks/pre-commit", hook), "create", "EROFS")
		p := w.probe(reviewWriteCwd, "write-file", w.dir+"/.husky/pre-commit", hook)
		w.write("home/proj/a", "a")
		w.mustGit(w.dir, "add", "a")
		w.hostGit(w.dir, "commit", "-qm", "a")
		if exists(mark) {
			t.Errorf("ESCAPE: the host's git commit ran a pre-commit hook written in the sandbox (core.hooksPath=.husky)\n%s", p.result)
		}
		want(t, p, "create", "EROFS")

		// Control: a hook at core.hooksPath runs on the host.
		w.write("home/proj/.husky/pre-commit", hook)
		os.Chmod(w.dir+"/.husky/pre-commit", 0o755)
		os.Remove(mark)
		w.write("home/proj/b", "b")
		w.mustGit(w.dir, "add", "b")
		w.hostGit(w.dir, "commit", "-qm", "b")
		if !exists(mark) {
			t.Fatal("control: the hook at core.hooksPath did not run on the host")
		}
	})
}

// TestReviewEscapeScanExhausted: the walk that finds nested repositories
// (and .vscode, .idea, deeper .bashrc …) stops after 50000 entries with a
// warning, and what it did not reach is not protected. A command fills a
// directory that sorts first; the next run leaves a nested repository's
// hooks writable.
func TestReviewEscapeScanExhausted(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		sub := w.mkdir("home/proj/sub")
		w.mustGit(sub, "init", "-q")
		hook := sub + "/.git/hooks/pre-commit"
		// Control: the nested repository's hooks are protected.
		want(t, w.probe(reviewWriteCwd, "write-file", hook, "#!/bin/sh\n"), "create", "EROFS")
		want(t, w.probe(reviewWriteCwd, "fill", w.dir+"/aaa", "50001"), "fill", "ok")
		p := w.probe(reviewWriteCwd, "write-file", hook, "#!/bin/sh\n")
		if data, _ := os.ReadFile(hook); len(data) > 0 {
			t.Errorf("ESCAPE: after the working directory was filled, a nested repository's hook was written\n%s", p.result)
		}
		want(t, p, "create", "EROFS")
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
		want(t, w.probe(reviewWriteCwd, "write", w.home+"/.bashrc"), "write", "EROFS")
		want(t, w.probe(reviewWriteCwd, "write", w.home+"/.gitconfig"), "write", "EROFS")
		want(t, w.probe(reviewWriteCwd, "write-file", w.home+"/.bash_profile", "x"), "create", "EACCES")
		var escaped []string
		for _, f := range []string{".zshenv", ".config/git/config"} {
			p := w.probe(reviewWriteCwd, "write", filepath.Join(w.home, f))
			if p.steps["write"] != "EROFS" {
				escaped = append(escaped, f+": "+p.steps["write"])
			}
		}
		for _, f := range []string{".bash_login", ".bash_logout", ".zlogin", ".ssh/rc"} {
			p := w.probe(reviewWriteCwd, "write-file", filepath.Join(w.home, f), "x")
			if p.steps["create"] != "EACCES" {
				escaped = append(escaped, f+": "+p.steps["create"])
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
			w.write(strings.TrimPrefix(c.file, w.root+"/"), reviewWriteCwd)
			run := func(args ...string) probeRun {
				return newProbeRun(w.srt(append(append(append([]string{}, c.args...), "--", probeBin(t)), args...)...))
			}
			// Control: outside is read-only under these settings.
			want(t, run("write-file", outside+"/"+c.name, "x"), "create", "EROFS")
			p := run("write-file", c.file, open)
			after := run("write-file", outside+"/"+c.name, "x")
			if exists(outside + "/" + c.name) {
				t.Errorf("ESCAPE (%s settings file %s): the command rewrote srt's settings and the next run wrote outside allowWrite\n%s", c.name, c.file, p.result)
				continue
			}
			want(t, p, "create", "EROFS")
			want(t, after, "create", "EROFS")
		}
	})
}

// TestReviewEscapeAvailabilityDenyGlob: a deny pattern that must be
// expanded (denyRead ["./**/.env"], realistic) fails closed when the walk
// passes 100000 entries or the matches need more than 10000 mounts; a
// command that may write the working directory creates that many, and
// every later srt run with these settings fails before the command starts.
func TestReviewEscapeAvailabilityDenyGlob(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(`{"denyRead":["./**/.env"],"allowWrite":["."],"denyWrite":[]}`)
		// Control: the settings run.
		expect(t, w.sh(s, "echo RUNS"), 0, "RUNS")
		want(t, w.probe(s, "fill", w.dir+"/junk", "100001"), "fill", "ok")
		if r := w.sh(s, "echo RUNS"); r.code != 0 {
			t.Errorf("AVAILABILITY: after the command made 100001 files, every later run fails:\n%s", r)
		}
		os.RemoveAll(w.dir + "/junk")
		expect(t, w.sh(s, "echo RUNS"), 0, "RUNS")
		want(t, w.probe(s, "fill-dirs", w.dir+"/many", "10001", ".env"), "fill", "ok")
		if r := w.sh(s, "echo RUNS"); r.code != 0 {
			t.Errorf("AVAILABILITY: after the command made 10001 .env files, every later run fails:\n%s", r)
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
		r := w.sh(reviewWriteCwd, `grep -E '^Cap(Bnd|Eff|Prm)' /proc/self/status; unshare -n true 2>/dev/null; echo unshare=$?`)
		expect(t, r, 0, "CapBnd:\t0000000000000000", "CapEff:\t0000000000000000", "unshare=1")
		// Control: the host's bounding set of the same user is not empty.
		if data, _ := os.ReadFile("/proc/self/status"); !strings.Contains(string(data), "CapBnd:\t000001") {
			t.Fatalf("control: the test process's bounding set is empty")
		}
	})
}

// TestReviewEscapeSiblingRepository: the mandatory protections of .git
// (hooks, config) cover the working directory and below. With a grant
// above it (allowWrite ["~"] or [".."], as item 12's setting), the hooks
// and config of every other repository in that space are writable; the
// host's next git commit there runs the hook. Item 12 covers start-up
// files in $HOME, not repositories.
func TestReviewEscapeSiblingRepository(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		other := w.mkdir("home/other")
		w.mustGit(other, "init", "-q")
		w.mustGit(w.dir, "init", "-q")
		s := fsSettings(`{"denyRead":[],"allowWrite":["~"],"denyWrite":[]}`)
		mark := w.marker("sibling-hook-ran")
		hook := "#!/bin/sh\n" + touchCmd(mark) + "\n"
		// Control: the working directory's own repository is protected.
		want(t, w.probe(s, "write-file", w.dir+"/.git/hooks/pre-commit", hook), "create", "EROFS")
		p := w.probe(s, "write-file", other+"/.git/hooks/pre-commit", hook)
		w.write("home/other/a", "a")
		w.mustGit(other, "add", "a")
		w.hostGit(other, "commit", "-qm", "a")
		if exists(mark) {
			t.Errorf("ESCAPE: a hook written in a repository beside the working directory ran on the host\n%s", p.result)
		}
		want(t, p, "create", "EROFS")
	})
}

// TestReviewEscapeClaudeSettingsLocal: item 9 names .claude/settings.json;
// .claude/settings.local.json holds the same hooks (commands Claude Code
// runs on the host) and is as writable when .claude exists.
func TestReviewEscapeClaudeSettingsLocal(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/.claude")
		// Control: .claude/commands (protected, missing: a placeholder)
		// is refused.
		want(t, w.probe(reviewWriteCwd, "write-file", w.dir+"/.claude/commands", "x"), "create", "EACCES")
		p := w.probe(reviewWriteCwd, "write-file", w.dir+"/.claude/settings.local.json", `{"hooks":{}}`)
		// A placeholder (EACCES) or a read-only .claude (EROFS).
		if o := p.steps["create"]; o != "EACCES" && o != "EROFS" {
			t.Fatalf("ESCAPE: .claude/settings.local.json was written (%s)\n%s", o, p.result)
		}
	})
}

// TestReviewEscapeAvailabilityProtectedLink: the scan protects an existing
// <dir>/.claude/commands (or <repo>/.git/hooks) whatever it is; a command
// makes it a symlink to /, and from then on the protection resolves to /
// and every later run can write nothing (the working directory included).
// Item 21 is the same for a deny pattern; this is the mandatory scan.
func TestReviewEscapeAvailabilityProtectedLink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		// Control: the working directory is writable.
		want(t, w.probe(reviewWriteCwd, "write-file", w.dir+"/before", "x"), "create", "ok")
		w.mkdir("home/proj/sub/.claude")
		want(t, w.probe(reviewWriteCwd, "plant-link", "/", w.dir+"/sub/.claude/commands"), "plant-link", "ok")
		p := w.probe(reviewWriteCwd, "write-file", w.dir+"/after", "x")
		if p.steps["create"] != "ok" {
			t.Errorf("AVAILABILITY: a symlink to / at sub/.claude/commands makes every later run read-only\n%s", p.result)
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
		p := w.probe(reviewWriteCwd, "review-setid", planted)
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

// TestReviewEscapeInheritedDatagramSocket: item 5 is socketpair(AF_UNIX,
// SOCK_DGRAM) made inside. A datagram socket the command inherits (its
// standard input, as a supervisor that talks to its children over
// socketpairs hands it) reaches every host datagram socket the same way:
// sendto() with a path overrides the socket's peer. Seccomp's socket()
// rule never sees it.
func TestReviewEscapeInheritedDatagramSocket(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		path := w.path("home/host-dgram.sock")
		l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		os.Chmod(path, 0o777)
		got := func() bool {
			l.SetReadDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 64)
			n, _, err := l.ReadFrom(buf)
			return err == nil && string(buf[:n]) == "PROBE-DGRAM"
		}
		run := func(sandboxed bool) probeRun {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			in, other := os.NewFile(uintptr(fds[0]), "in"), os.NewFile(uintptr(fds[1]), "other")
			defer in.Close()
			defer other.Close()
			var cmd *exec.Cmd
			if sandboxed {
				cmd = w.command(nil, "-s", w.settings(reviewWriteCwd), "--", probeBin(t), "sendto-stdin", path)
			} else {
				cmd = exec.Command(probeBin(t), "sendto-stdin", path)
				w.asRunner(cmd)
			}
			cmd.Stdin = in
			out, _ := cmd.Output()
			return newProbeRun(result{stdout: string(out), code: cmd.ProcessState.ExitCode()})
		}
		p := run(true)
		if got() {
			t.Errorf("ESCAPE: a datagram sent through an inherited socket reached a host Unix socket\n%s", p.result)
		}
		want(t, p, "sendto-stdin", "EPERM")
		// Control: outside the sandbox the same code delivers it.
		want(t, run(false), "sendto-stdin", "ok")
		if !got() {
			t.Fatal("control: the datagram did not arrive")
		}
	})
}
