//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Start-up files (issue 10, items 9 and 12): files a later host program
// runs, in the working directory's .claude and in $HOME.

// TestEscapeClaudeDir is item 9: .claude/settings.json (and
// settings.local.json) hooks run commands on the host; the whole of
// .claude is protected whether it exists or not, nested ones too.
func TestEscapeClaudeDir(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		hook := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}`
		s := fsSettings(writeCwd)
		// Missing: the directory is a placeholder.
		want(t, w.probe(s, "plant", w.dir+"/.claude/settings.json", hook), "mkdir", "ok", "plant", refused("EROFS"))
		if exists(w.dir + "/.claude") {
			t.Fatal("the .claude placeholder was left on the host")
		}
		// Existing: every file in it, new ones included.
		w.write("home/proj/.claude/settings.json", "{}\n")
		w.write("home/proj/pkg/.claude/settings.json", "{}\n")
		for _, f := range []string{".claude/settings.json", ".claude/settings.local.json", "pkg/.claude/settings.json"} {
			want(t, w.probe(s, "plant", filepath.Join(w.dir, f), hook), "plant", refused("EROFS"))
		}
		want(t, w.probe(s, "plant", w.dir+"/.claude/commands/x.md", "run rm -rf ~"), "mkdir", refused("EROFS"))
		if data, _ := os.ReadFile(w.dir + "/.claude/settings.json"); string(data) != "{}\n" {
			t.Fatalf("ESCAPE: .claude/settings.json changed on the host: %q", data)
		}
		// Control: the same plant works where the rule is lifted.
		open := fsSettings(`{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}`)
		want(t, w.probe(open, "plant", w.dir+"/.claude/settings.local.json", hook), "plant", "ok")
	})
}

// homeWritable are settings that let the command write all of $HOME.
var homeWritable = fsSettings(`{"denyRead":[],"allowWrite":["~"],"denyWrite":[]}`)

// TestEscapeHomeStartup is item 12: with $HOME writable and the working
// directory below it, the start-up files of shells and tools in $HOME are
// protected, existing or not; the directories tools keep their files in
// (~/.ssh, ~/.config) stay writable.
func TestEscapeHomeStartup(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/.bashrc", "# user\n")
		w.write("home/.profile", "export FROM_PROFILE=yes\n")
		w.mkdir("home/.config/gh")
		payload := "touch /tmp/pwned\n"
		// Each start-up file, and the step that refuses it: an existing
		// file or a missing directory is read-only (EROFS), a missing file
		// is null (EACCES) unless its placeholder must be read.
		for f, refusal := range map[string]string{
			".bashrc":                        "plant " + refused("EROFS"),
			".bash_profile":                  "plant " + refused("EROFS"), // reads as the next login file
			".zshenv":                        "plant " + placeholderRefused(),
			".gitconfig":                     "plant " + placeholderRefused(),
			".npmrc":                         "plant " + placeholderRefused(),
			".claude.json":                   "plant " + refused("EROFS"),     // reads as {}
			".cargo/config.toml":             "plant " + placeholderRefused(), // ~/.cargo is missing: made writable
			".ssh/authorized_keys":           "plant " + placeholderRefused(), // ~/.ssh likewise
			".ssh/config":                    "plant " + placeholderRefused(),
			".config/git/config":             "plant " + refused("EROFS"),
			".config/systemd/user/x.service": "plant " + refused("EROFS"),
			".config/systemd/user/default.target.wants/x.service": "mkdir " + refused("EROFS"),
			".config/autostart/x.desktop":                         "plant " + refused("EROFS"),
			".config/environment.d/x.conf":                        "plant " + refused("EROFS"),
			".config/fish/conf.d/x.fish":                          "mkdir " + refused("EROFS"),
			".config/nvim/init.lua":                               "plant " + refused("EROFS"),
			".vim/plugin/x.vim":                                   "mkdir " + refused("EROFS"),
			".claude/settings.json":                               "plant " + refused("EROFS"),
		} {
			step, outcome, _ := strings.Cut(refusal, " ")
			p := w.probe(homeWritable, "plant", filepath.Join(w.home, f), payload)
			if p.steps[step] != outcome {
				t.Errorf("ESCAPE: ~/%s: want %s, got %v\n%s", f, refusal, p.steps, p.result)
			}
		}
		// Tools keep working beside them.
		for _, f := range []string{".ssh/known_hosts", ".config/gh/hosts.yml", ".config/newtool/x", ".config/systemd/other"} {
			want(t, w.probe(homeWritable, "plant", filepath.Join(w.home, f), "x\n"), "mkdir", "ok", "plant", "ok")
		}
		// Afterwards only what the command wrote is left.
		for _, f := range []string{".zshenv", ".bash_profile", ".claude", ".config/git", ".config/systemd/user", ".ssh/config"} {
			if exists(filepath.Join(w.home, f)) {
				t.Errorf("placeholder ~/%s left on the host", f)
			}
		}
		if !exists(w.home+"/.ssh/known_hosts") || !exists(w.home+"/.config/systemd/other") {
			t.Error("what the command wrote beside the placeholders is gone")
		}
		if data, _ := os.ReadFile(w.home + "/.bashrc"); string(data) != "# user\n" {
			t.Errorf("ESCAPE: ~/.bashrc changed: %q", data)
		}
		// Control: the same plant works where the rule is lifted.
		open := fsSettings(`{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}`)
		want(t, w.probe(open, "plant", w.home+"/.zshenv", payload), "plant", "ok")
		os.Remove(w.home + "/.zshenv")

		// With the working directory at $HOME and only "." writable, the
		// same holds.
		w.dir = w.home
		want(t, w.probe(fsSettings(writeCwd), "plant", w.home+"/.zlogin", payload), "plant", placeholderRefused())
		want(t, w.probe(fsSettings(writeCwd), "plant", w.home+"/.ssh/rc", payload), "mkdir", "ok", "plant", placeholderRefused())
	})
}

// TestHomeLoginShellsDuringRun: the placeholder of a missing .bash_profile
// reads the next login file bash would read, so login shells started while
// a sandbox runs, on the host and inside, still read ~/.profile.
func TestHomeLoginShellsDuringRun(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/.profile", "export FROM_PROFILE=yes\n")
		expect(t, w.sh(homeWritable, `bash -lc 'echo "inside FROM_PROFILE=$FROM_PROFILE"'`), 0, "inside FROM_PROFILE=yes")
		// On the host, while a sandbox runs.
		cmd := w.command(nil, "-s", w.settings(homeWritable), "-c", `while [ ! -e go ]; do sleep 0.05; done`)
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return exists(w.home + "/.bash_profile") }, "the .bash_profile placeholder")
		login := exec.Command("bash", "-lc", `echo "host FROM_PROFILE=$FROM_PROFILE"`)
		login.Env = w.env()
		w.asRunner(login)
		got, err := login.CombinedOutput()
		w.write("home/proj/go", "")
		waitExit(t, cmd, &out)
		if err != nil || !strings.Contains(string(got), "host FROM_PROFILE=yes") {
			t.Fatalf("a login shell on the host during the run did not read ~/.profile: %v\n%s", err, got)
		}
		if exists(w.home + "/.bash_profile") {
			t.Fatal("the .bash_profile placeholder was left on the host")
		}
		// Control: an empty .bash_profile (what a plain placeholder would
		// be) hides ~/.profile from the same login shell.
		w.write("home/.bash_profile", "")
		login = exec.Command("bash", "-lc", `echo "host FROM_PROFILE=$FROM_PROFILE"`)
		login.Env = w.env()
		w.asRunner(login)
		if got, _ := login.CombinedOutput(); strings.Contains(string(got), "FROM_PROFILE=yes") {
			t.Fatalf("control: an empty .bash_profile did not hide ~/.profile: %s", got)
		}
	})
}
