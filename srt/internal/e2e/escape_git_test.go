//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The .git escapes (issue 10, items 4 and 17): a command that may write the
// working directory tries to make git on the host run a command it wrote,
// through every part of .git that git reads as configuration, as a pointer
// to another directory, or as code. Each attack is followed by real git on
// the host; a planted command would create a marker file. The controls plant
// the same with the same probe outside the sandbox, and the same git makes
// the marker appear.

// gitVars are the variables git runs with in these tests: no system config,
// an identity for commits.
var gitVars = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}

// gitOnHost runs git on the host (no sandbox) as the runner, in dir.
func (w *workspace) gitOnHost(dir string, args ...string) (string, error) {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, w.env(gitVars...)
	w.asRunner(cmd)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitOnHostOK is gitOnHost that fails the test on an error.
func (w *workspace) gitOnHostOK(dir string, args ...string) {
	w.t.Helper()
	if out, err := w.gitOnHost(dir, args...); err != nil {
		w.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// shGit runs a shell command line in the sandbox with git's variables;
// $PROBE is the probe.
func (w *workspace) shGit(settingsJSON, command string) result {
	w.t.Helper()
	return w.srtEnv(append([]string{"PROBE=" + probeBin(w.t)}, gitVars...), "-s", w.settings(settingsJSON), "-c", command)
}

// markFile is the file a planted command creates when it runs; it lies in a
// directory of the runner's outside home, which no sandbox of these tests
// may write.
func (w *workspace) markFile(name string) string {
	p := filepath.Join(w.mkdir("marks"), name)
	os.Remove(p)
	return p
}

// touchScript is a shell script that creates mark; exiting 1 makes git
// treat an fsmonitor as failed and carry on.
func touchScript(mark string) string { return "#!/bin/sh\ntouch " + mark + "\nexit 1\n" }

// gitFixture is a repository in the working directory with a submodule
// (lib, from ~/lib), a linked worktree (~/wt), extensions.worktreeConfig
// on, a filter driver of the user's (~/../tools/filter.sh, which creates a
// mark), and a bare repository to fetch from (~/up.git).
func gitFixture(t *testing.T, w *workspace) (filterMark string) {
	lib := w.mkdir("home/lib")
	w.gitOnHostOK(lib, "init", "-q")
	w.write("home/lib/f", "lib\n")
	w.gitOnHostOK(lib, "add", "f")
	w.gitOnHostOK(lib, "commit", "-qm", "lib")
	w.gitOnHostOK(w.dir, "init", "-q")
	w.write("home/proj/README", "readme\n")
	w.gitOnHostOK(w.dir, "add", "README")
	w.gitOnHostOK(w.dir, "commit", "-qm", "readme")
	w.gitOnHostOK(w.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "lib")
	w.gitOnHostOK(w.dir, "commit", "-qm", "lib")
	w.gitOnHostOK(w.dir, "worktree", "add", "-q", "../wt")
	w.gitOnHostOK(w.dir, "config", "extensions.worktreeConfig", "true")
	filterMark = w.markFile("filter")
	filter := w.write("tools/filter.sh", "#!/bin/sh\ntouch "+filterMark+"\ncat\n")
	os.Chmod(filter, 0o755)
	w.gitOnHostOK(w.dir, "config", "filter.probe.clean", filter)
	w.gitOnHostOK(w.home, "clone", "-q", "--bare", w.dir, "up.git")
	return filterMark
}

// TestEscapeGitRedirections is item 4: the command plants a core.fsmonitor
// through .git/commondir, through config.worktree, in a submodule's config;
// a hook in a submodule's hooks/; an attribute that selects a filter; a
// legacy remote whose repository has a pre-receive hook; an alternates
// file; a new submodule git directory; a linked worktree's commondir.
func TestEscapeGitRedirections(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		filterMark := gitFixture(t, w)
		s := fsSettings(writeCwd)
		evil := w.dir + "/.evil"
		marks := map[string]string{}
		for _, m := range []string{"commondir", "config-worktree", "module-config", "module-hook", "remote", "wt-commondir"} {
			marks[m] = w.markFile(m)
		}
		// The command prepares what the redirections lead to, where it
		// may write: a repository whose config runs an fsmonitor, and a
		// bare repository whose pre-receive hook runs.
		prepare := `set -e
repo() { mkdir -p $1; cp -r .git/objects .git/refs $1/; printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = %s\n' $1/fsmonitor.sh > $1/config; printf "$2" > $1/fsmonitor.sh; chmod +x $1/fsmonitor.sh; }
repo ` + evil + ` '` + touchScript(marks["commondir"]) + `'
repo ` + evil + `-wt '` + touchScript(marks["wt-commondir"]) + `'
git init -q --bare ` + evil + `/push.git
printf '` + touchScript(marks["remote"]) + `' > ` + evil + `/push.git/hooks/pre-receive
chmod +x ` + evil + `/push.git/hooks/pre-receive; echo PREPARED`
		expect(t, w.shGit(s, prepare), 0, "PREPARED")
		fsmon := func(mark string) string {
			script := evil + "/" + filepath.Base(mark) + ".sh"
			os.WriteFile(script, []byte(touchScript(mark)), 0o755)
			w.chown(script)
			return "[core]\n\tfsmonitor = " + script + "\n"
		}
		plants := []struct {
			name, path, content string
			replace             bool
		}{
			{"commondir", ".git/commondir", evil + "\n", false},
			{"config-worktree", ".git/config.worktree", fsmon(marks["config-worktree"]), false},
			{"module-config", ".git/modules/lib/config", fsmon(marks["module-config"]), false},
			{"module-hook", ".git/modules/lib/hooks/pre-commit", touchScript(marks["module-hook"]), false},
			{"attributes", ".git/info/attributes", "* filter=probe\n", false},
			{"remote", ".git/remotes/origin", "URL: " + evil + "/push.git\nPush: +refs/heads/*:refs/heads/*\n", false},
			{"alternates", ".git/objects/info/alternates", evil + "/objects\n", false},
			{"new-module", ".git/modules/evil/hooks/post-checkout", touchScript(marks["module-hook"]), false},
			{"wt-commondir", ".git/worktrees/wt/commondir", evil + "-wt\n", true},
		}
		runs := map[string]probeRun{}
		for _, p := range plants {
			path := filepath.Join(w.dir, p.path)
			if p.replace {
				runs[p.name] = w.probe(s, "replace", path, p.content)
			} else {
				runs[p.name] = w.probe(s, "plant", path, p.content)
			}
		}
		// git on the host, as the user would run it next.
		edits := 0
		hostGit := map[string]func(){
			"commondir":       func() { w.gitOnHost(w.dir, "status") },
			"config-worktree": func() { w.gitOnHost(w.dir, "status") },
			"module-config":   func() { w.gitOnHost(w.dir+"/lib", "status") },
			"module-hook":     func() { w.gitOnHost(w.dir+"/lib", "commit", "--allow-empty", "-qm", "host") },
			"attributes": func() {
				edits++ // new content each time, so that git add filters it
				w.write("home/proj/README", "changed "+itoa(edits)+"\n")
				w.gitOnHost(w.dir, "add", "README")
			},
			"remote":       func() { w.gitOnHost(w.dir, "push", "-q") },
			"wt-commondir": func() { w.gitOnHost(w.home+"/wt", "status") },
		}
		marks["attributes"] = filterMark
		for name, run := range hostGit {
			run()
			if exists(marks[name]) {
				t.Errorf("ESCAPE (%s): git on the host ran a command the sandbox planted", name)
			}
		}
		for _, p := range plants {
			switch {
			case p.replace:
				want(t, runs[p.name], "unlink", refused("EBUSY"), "create", "EEXIST")
			case p.name == "new-module":
				want(t, runs[p.name], "mkdir", refused("EROFS"))
			default:
				want(t, runs[p.name], "plant", refused("EROFS"))
			}
		}

		// Controls: the same plants made outside the sandbox run on the
		// host's next git.
		for _, p := range plants {
			run, ok := hostGit[p.name]
			if !ok {
				continue
			}
			path := filepath.Join(w.dir, p.path)
			before, _ := os.ReadFile(path)
			if p.replace {
				want(t, w.hostProbe("replace", path, p.content), "unlink", "ok", "create", "ok")
			} else {
				want(t, w.hostProbe("plant", path, p.content), "plant", "ok")
			}
			run()
			if !exists(marks[p.name]) {
				t.Errorf("control (%s): the planted command did not run on the host", p.name)
			}
			// Undo the plant for the next control.
			if before == nil {
				os.Remove(path)
			} else {
				os.WriteFile(path, before, 0o644)
			}
		}
		// The others have no host-side effect to observe; the probe's
		// plant succeeds outside.
		for _, p := range plants {
			if _, ok := hostGit[p.name]; !ok {
				want(t, w.hostProbe("plant", filepath.Join(w.dir, p.path), p.content), "plant", "ok")
			}
		}
	})
}

// TestGitWorksInside: with the protections in place, git still works in
// the sandbox: add, commit, a new branch, a fetch from a local bare
// repository, a commit in the submodule, a new linked worktree; a
// submodule update with allowGitConfig.
func TestGitWorksInside(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		gitFixture(t, w)
		r := w.shGit(fsSettings(writeCwd), `set -e
echo more >> README; git add README; git commit -qm inside
git checkout -qb topic
git fetch -q `+w.home+`/up.git master
git -C lib commit --allow-empty -qm in-submodule
git worktree add -q -b wt2 .wt2
git -C .wt2 commit --allow-empty -qm in-worktree
git status --short; echo GIT-WORKS`)
		expect(t, r, 0, "GIT-WORKS", "!fatal", "!warning")
		out, _ := w.gitOnHost(w.dir, "log", "--oneline", "-1")
		if !exists(w.dir+"/.wt2/.git") || len(out) == 0 {
			t.Fatalf("the commits and the worktree made inside did not reach the host: %q", out)
		}
		// git submodule update rewrites the submodule's core.worktree on
		// every run (git 2.39), so it needs that config writable:
		// allowGitConfig makes it so.
		expect(t, w.shGit(fsSettings(writeCwd), "git submodule update -q"), 128, "could not set 'core.worktree'")
		expect(t, w.shGit(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[],"allowGitConfig":true}`), "git submodule update -q && echo UPDATED"), 0, "UPDATED")
		// The placeholders are gone from the host afterwards.
		for _, p := range []string{".git/commondir", ".git/config.worktree", ".git/remotes", ".git/objects/info/alternates"} {
			if exists(filepath.Join(w.dir, p)) {
				t.Errorf("placeholder %s left on the host", p)
			}
		}
	})
}

// TestEscapeNestedRepoHeadMovedAside is item 17: a nested repository was
// recognised by its .git/HEAD, which the command may move. Run 1 moves HEAD
// aside, run 2 writes a hook, run 3 moves HEAD back; the host's next commit
// in the nested repository would run the hook. Every entry named .git is a
// repository now, a .git file (a submodule's or worktree's pointer)
// included.
func TestEscapeNestedRepoHeadMovedAside(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		nested := w.mkdir("home/proj/nested")
		w.gitOnHostOK(nested, "init", "-q")
		w.gitOnHostOK(nested, "commit", "--allow-empty", "-qm", "nested")
		mark := w.markFile("nested-hook")
		hook := nested + "/.git/hooks/pre-commit"
		s := fsSettings(writeCwd)
		want(t, w.probe(s, "rename", nested+"/.git/HEAD", nested+"/.git/HEAD.bak"), "rename", "ok")
		p := w.probe(s, "plant", hook, touchScript(mark))
		want(t, w.probe(s, "rename", nested+"/.git/HEAD.bak", nested+"/.git/HEAD"), "rename", "ok")
		w.gitOnHost(nested, "commit", "--allow-empty", "-qm", "host")
		if exists(mark) {
			t.Fatalf("ESCAPE: a hook written after HEAD was moved aside ran on the host\n%s", p.result)
		}
		want(t, p, "plant", refused("EROFS"))
		// A .git directory with nothing in it but hooks/, and a .git
		// file, are repositories too.
		w.mkdir("home/proj/bare/.git/hooks")
		want(t, w.probe(s, "plant", w.dir+"/bare/.git/hooks/post-checkout", touchScript(mark)), "plant", refused("EROFS"))
		gitFile := w.write("home/proj/sub/.git", "gitdir: ../nested/.git\n")
		want(t, w.probe(s, "plant", gitFile, "gitdir: "+w.dir+"/.evil\n"), "plant", refused("EROFS"))

		// Controls: the same probe writes the same names where they are
		// not named .git, and the hook planted outside the sandbox runs
		// on the host's commit.
		want(t, w.probe(s, "plant", nested+"/.gut/hooks/pre-commit", touchScript(mark)), "plant", "ok")
		want(t, w.probe(s, "plant", w.dir+"/sub/.gut", "x"), "plant", "ok")
		want(t, w.hostProbe("plant", hook, touchScript(mark)), "plant", "ok")
		w.gitOnHost(nested, "commit", "--allow-empty", "-qm", "host")
		if !exists(mark) {
			t.Fatal("control: the hook planted outside the sandbox did not run on the host")
		}
	})
}

// TestEscapeLinkedWorktreeRepo: the working directory is a linked worktree
// (its .git is a file naming ~/proj/.git/worktrees/wt) and the settings let
// the command write the repository it belongs to. The hooks and config git
// uses in the worktree are that repository's: srt follows the .git file.
func TestEscapeLinkedWorktreeRepo(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.gitOnHostOK(w.dir, "commit", "--allow-empty", "-qm", "main")
		w.gitOnHostOK(w.dir, "worktree", "add", "-q", "-b", "side", "../wt")
		repo := w.dir
		w.dir = w.home + "/wt"
		mark := w.markFile("worktree-hook")
		s := fsSettings(`{"denyRead":[],"allowWrite":[".","` + repo + `"],"denyWrite":[]}`)
		hook := repo + "/.git/hooks/pre-commit"
		p := w.probe(s, "plant", hook, touchScript(mark))
		w.gitOnHost(w.dir, "commit", "--allow-empty", "-qm", "host")
		if exists(mark) {
			t.Fatalf("ESCAPE: a hook written in the worktree's repository ran on the host\n%s", p.result)
		}
		want(t, p, "plant", refused("EROFS"))
		want(t, w.probe(s, "plant", repo+"/.git/worktrees/wt/config.worktree", "[core]\n\tfsmonitor = /x\n"), "plant", refused("EROFS"))
		want(t, w.probe(s, "plant", w.dir+"/.git", "gitdir: /elsewhere\n"), "plant", refused("EROFS"))
		// git works in the worktree inside.
		expect(t, w.shGit(s, "git commit --allow-empty -qm inside && echo COMMITTED"), 0, "COMMITTED")
		// Control: the hook planted outside the sandbox runs.
		want(t, w.hostProbe("plant", hook, touchScript(mark)), "plant", "ok")
		w.gitOnHost(w.dir, "commit", "--allow-empty", "-qm", "host")
		if !exists(mark) {
			t.Fatal("control: the hook planted outside the sandbox did not run on the host")
		}
	})
}

// TestEscapeHooksPath: git runs hooks from the directory core.hooksPath
// names, not from .git/hooks: husky's .husky in the working tree, or a
// directory in $HOME that the user's global config names for every
// repository. srt protects the directory the (protected) config names.
func TestEscapeHooksPath(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.mkdir("home/proj/.husky")
		w.gitOnHostOK(w.dir, "config", "core.hooksPath", ".husky")
		w.write("home/.gitconfig", "[core]\n\thooksPath = ~/.githooks\n")
		mark := w.markFile("hooks-path")
		commit := func(dir string) { w.gitOnHost(dir, "commit", "--allow-empty", "-qm", "host") }
		p := w.probe(fsSettings(writeCwd), "plant", w.dir+"/.husky/pre-commit", touchScript(mark))
		commit(w.dir)
		if exists(mark) {
			t.Fatalf("ESCAPE: a hook written in core.hooksPath ran on the host's commit\n%s", p.result)
		}
		want(t, p, "plant", refused("EROFS"))
		// The global one, with $HOME writable; another repository uses it.
		other := w.mkdir("home/other")
		w.gitOnHostOK(other, "init", "-q")
		p = w.probe(homeWritable, "plant", w.home+"/.githooks/pre-commit", touchScript(mark))
		commit(other)
		if exists(mark) {
			t.Fatalf("ESCAPE: a hook written in the global core.hooksPath ran on the host's commit\n%s", p.result)
		}
		want(t, p, "mkdir", "ok", "plant", refused("EROFS"))

		// Controls: the same plants outside the sandbox run.
		want(t, w.hostProbe("plant", w.dir+"/.husky/pre-commit", touchScript(mark)), "plant", "ok")
		commit(w.dir)
		if !exists(mark) {
			t.Fatal("control: the hook in core.hooksPath did not run")
		}
		os.Remove(mark)
		want(t, w.hostProbe("plant", w.home+"/.githooks/pre-commit", touchScript(mark)), "plant", "ok")
		commit(other)
		if !exists(mark) {
			t.Fatal("control: the hook in the global core.hooksPath did not run")
		}
	})
}
