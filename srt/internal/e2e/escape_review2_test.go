//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The second fresh hostile review of issue 10, made after the fixes
// landed: attacks on the new code (home start-up protections and their
// placeholders, the settings-file protection, symlink trust, the kernel
// covers, the program checks). TestReview2Escape… tests try an attack that
// got out on the code they were written against (each is closed now, and
// the test keeps it closed); TestReview2Holds… tests guard an attack that
// was refused then too. Each has a control showing that the attack code
// works where the protection is lifted. The review's other findings are
// tested where they were fixed: escape_stdio_test.go (inherited sockets),
// escape_phlock_test.go (placeholders across state directories).

// review2Siblings are start-up files of tools srt's $HOME list names
// (plan/home.go: "tools that run code from their configuration", systemd
// --user, vim, X sessions) at paths the list misses: each is read by the
// same tool, as code or as configuration that runs code, beside the entry
// that is protected.
var review2Siblings = []struct{ rel, why string }{
	{".cargo/config", "cargo reads it before config.toml (and prefers it when both exist): build.rustc-wrapper runs in every cargo command, `cargo metadata` included"},
	{".config/tmux/tmux.conf", "tmux 3.2+ reads it as well as ~/.tmux.conf: run-shell"},
	{".config/emacs/init.el", "emacs 27+ reads its XDG init file when ~/.emacs and ~/.emacs.d are missing"},
	{".local/share/systemd/user/evil.service", "systemd --user's unit path includes $XDG_DATA_HOME/systemd/user"},
	{".config/systemd/user.control/evil.service", "systemd --user's unit path includes user.control"},
	{".config/systemd/user.conf", "systemd --user's manager configuration (DefaultEnvironment=LD_PRELOAD=…)"},
	{".exrc", "vim reads it when no vimrc exists"},
	{".local/share/nvim/site/plugin/evil.vim", "neovim's default runtimepath: plugin/ files run at every start"},
	{".xsession", "Debian's Xsession runs it as the session (beside .xsessionrc, which is protected)"},
}

// TestReview2EscapeHomeStartupSiblings: with $HOME writable, the files
// above are writable from inside and survive on the host, while the names
// srt protects for the same tools (.cargo/config.toml, .tmux.conf,
// .emacs.d, .config/systemd/user, .vimrc, .config/nvim, .xsessionrc) are
// refused. A planted ~/.config/tmux/tmux.conf then runs on the host
// (tmux new-session), and, where cargo is installed for the runner, a
// planted ~/.cargo/config runs its rustc-wrapper on `cargo metadata`.
func TestReview2EscapeHomeStartupSiblings(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		// Control: the protected names of the same tools are refused.
		for _, f := range []string{".cargo/config.toml", ".tmux.conf", ".config/systemd/user/evil.service", ".xsessionrc"} {
			p := w.probe(homeWritable, "plant", filepath.Join(w.home, f), "# review2\n")
			if p.steps["plant"] == "ok" {
				t.Fatalf("control: the protected %s was written: %s", f, p.result)
			}
		}
		var escaped []string
		for _, s := range review2Siblings {
			p := w.probe(homeWritable, "plant", filepath.Join(w.home, s.rel), "# review2\n")
			if p.steps["mkdir"] == "ok" && p.steps["plant"] == "ok" {
				escaped = append(escaped, s.rel+" ("+s.why+")")
			}
		}
		// The real thing: a tmux configuration planted from inside runs on
		// the host when the user next starts tmux.
		if tmux, err := exec.LookPath("tmux"); err == nil {
			mark := w.markFile("tmux-ran")
			p := w.probe(homeWritable, "plant", w.home+"/.config/tmux/tmux.conf", `run-shell "touch `+mark+`"`+"\n")
			sock := filepath.Join(w.mkdir("marks"), "tmux.sock")
			cmd := exec.Command(tmux, "-S", sock, "new-session", "-d", "sleep 3")
			cmd.Env = w.env("TERM=xterm")
			w.asRunner(cmd)
			out, err := cmd.CombinedOutput()
			waitForOr(func() bool { return exists(mark) }, 5*time.Second)
			kill := exec.Command(tmux, "-S", sock, "kill-server")
			w.asRunner(kill)
			kill.Run()
			if exists(mark) {
				escaped = append(escaped, "RAN ON THE HOST: ~/.config/tmux/tmux.conf written inside ran `"+touchCmd(mark)+"` in the host's tmux ("+p.steps["plant"]+")")
			} else if p.steps["plant"] == "ok" {
				t.Logf("tmux did not run the planted configuration (%v: %s)", err, out)
			}
		} else {
			t.Log("tmux is not installed: the host run of a planted tmux.conf is not tried")
		}
		// cargo: as root, through the rustup install the test machine has.
		if cargo := "/root/.cargo/bin/cargo"; w.r.uid == 0 && exists(cargo) {
			mark := w.markFile("cargo-ran")
			wrapper := w.write("marks/wrapper.sh", "#!/bin/sh\ntouch "+mark+"\nexec \"$@\"\n")
			os.Chmod(wrapper, 0o755)
			p := w.probe(homeWritable, "plant", w.home+"/.cargo/config", "[build]\nrustc-wrapper = \""+wrapper+"\"\n")
			w.write("home/proj/Cargo.toml", "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
			w.write("home/proj/src/main.rs", "fn main() {}\n")
			cmd := exec.Command(cargo, "metadata", "--format-version", "1")
			cmd.Dir, cmd.Env = w.dir, w.env("RUSTUP_HOME=/root/.rustup")
			out, err := cmd.CombinedOutput()
			if exists(mark) {
				escaped = append(escaped, "RAN ON THE HOST: ~/.cargo/config written inside ran its rustc-wrapper in the host's `cargo metadata` ("+p.steps["plant"]+")")
			} else if p.steps["plant"] == "ok" {
				t.Logf("cargo did not run the planted wrapper (%v: %s)", err, out)
			}
		}
		if len(escaped) > 0 {
			t.Errorf("ESCAPE: with allowWrite [\"~\"], start-up files of the tools srt protects are writable at other names they read:\n  %s", strings.Join(escaped, "\n  "))
		}
	})
}

// waitForOr polls cond for at most d.
func waitForOr(cond func() bool, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && !cond(); time.Sleep(20 * time.Millisecond) {
	}
}

// results lists a probe run's RESULT lines for one step, in order.
func results(p probeRun, step string) []string {
	var out []string
	for _, line := range strings.Split(p.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "RESULT" && f[1] == step {
			out = append(out, f[2])
		}
	}
	return out
}

// review2TwoStateDirs runs the placeholder race between two srt processes
// of the same user: A holds the placeholder of a missing ~/.bashrc and
// ends while B still runs; B writes ~/.bashrc before and after A ended.
// stateA and stateB are the TMPDIRs (state directories) of the two.
func review2TwoStateDirs(t *testing.T, w *workspace, stateA, stateB string) (p probeRun, content string) {
	t.Helper()
	goA, goB := filepath.Join(w.root, "go-a"), filepath.Join(w.root, "go-b")
	rc := w.home + "/.bashrc"
	a := w.command([]string{"TMPDIR=" + stateA}, "-s", w.settings(homeWritable), "-c",
		`while [ ! -e `+goA+` ]; do sleep 0.05; done`)
	var aOut strings.Builder
	a.Stdout, a.Stderr = &aOut, &aOut
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { a.Process.Kill(); a.Wait() }()
	waitFor(t, func() bool { return exists(rc) }, "A's placeholder at "+rc)
	b := w.command([]string{"TMPDIR=" + stateB, "PROBE=" + probeBin(t)}, "-s", w.writeSettings("settings-b.json", homeWritable), "-c",
		`"$PROBE" write-file `+rc+` before; while [ ! -e `+goB+` ]; do sleep 0.05; done; "$PROBE" write-file `+rc+` 'touch /tmp/pwned # planted'`)
	bOut, err := os.CreateTemp(w.root, "b-out-")
	if err != nil {
		t.Fatal(err)
	}
	var bErr strings.Builder
	b.Stdout, b.Stderr = bOut, &bErr
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { b.Process.Kill(); b.Wait() }()
	out := func() string { data, _ := os.ReadFile(bOut.Name()); return string(data) }
	waitForOr(func() bool { return strings.Contains(out(), "RESULT create") }, 30*time.Second)
	if !strings.Contains(out(), "RESULT create") {
		t.Fatalf("B did not write in 30 s: stdout %q stderr %q", out(), bErr.String())
	}
	// A ends, and removes the placeholder it made.
	os.WriteFile(goA, nil, 0o644)
	waitExit(t, a, &aOut)
	os.WriteFile(goB, nil, 0o644)
	waitExit(t, b, &bErr)
	data, _ := os.ReadFile(rc)
	return newProbeRun(result{stdout: out(), stderr: bErr.String(), code: b.ProcessState.ExitCode()}), string(data)
}

// writeSettings writes a settings file of another name.
func (w *workspace) writeSettings(name, json string) string {
	return w.write(name, json)
}

// stateDir makes a TMPDIR for srt owned by the runner, mode 0700.
func (w *workspace) stateDir(rel string) string {
	p := w.mkdir(rel)
	os.Chmod(p, 0o700)
	return p
}

// TestReview2HoldsSettingsThroughLinkedDir: `-s link/s.json` where link
// is a symlinked directory in writable space. The settings file itself is
// read-only inside (EROFS); the link above it can be swapped for one to a
// directory holding other settings (the documented limit of protected
// names that are symlinks), and srt names that link on every run, as
// docs/security.md says. Control: the swap itself works, so the warning
// is what stands between the user and the next run's other rules.
func TestReview2HoldsSettingsThroughLinkedDir(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/conf/s.json", fsSettings(writeCwd))
		w.symlink("conf", "home/proj/link")
		r := w.srtEnv([]string{"PROBE=" + probeBin(t)}, "-s", "link/s.json", "-c", `"$PROBE" write-file link/s.json '{}'`)
		p := newProbeRun(r)
		want(t, p, "create", refused("EROFS"))
		expect(t, r, 0, "srt settings file "+w.dir+"/link/s.json: "+w.dir+"/link is a symlink")
		// Control: the link is replaceable from inside (documented limit).
		r = w.srt("-s", "link/s.json", "-c", `mkdir other && cp conf/s.json other/ && rm link && ln -s other link && echo SWAPPED`)
		if testBackend == "landlock" {
			// The Landlock backend keeps the link itself.
			expect(t, r, 1, "rm: cannot remove 'link': Read-only file system", "!SWAPPED")
		} else {
			expect(t, r, 0, "SWAPPED")
		}
	})
}

// TestReview2HoldsRelativeAllowAboveCwd: a relative allow entry that
// leaves the working directory ("../data") and passes through a symlink
// the caller could have made grants nothing, with a warning, like an
// absolute one; the denied target stays hidden. Control: naming the
// target itself grants it.
func TestReview2HoldsRelativeAllowAboveCwd(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("secret/id", "R2SECRET")
		w.symlink("../secret", "home/data")
		s := pathSettings([]string{w.path("secret")}, []string{"../data"}, []string{"../data"}, nil)
		r := w.srt("-s", w.settings(s), "-c", "cat ../data/id; echo x > ../data/w")
		if strings.Contains(r.stdout, "R2SECRET") || exists(w.path("secret/w")) {
			t.Fatalf("ESCAPE: ../data -> secret re-allowed the denied directory\n%s", r)
		}
		for _, warn := range []string{`filesystem.allowRead.0 "../data" grants nothing`, `filesystem.allowWrite.0 "../data" grants nothing`} {
			if !strings.Contains(r.stderr, warn) {
				t.Fatalf("no warning %q\n%s", warn, r)
			}
		}
		// Control: the real path grants.
		s = pathSettings([]string{w.path("secret")}, []string{w.path("secret")}, []string{w.path("secret")}, nil)
		r = w.srt("-s", w.settings(s), "-c", "cat ../data/id; echo x > ../data/w")
		expect(t, r, 0, "R2SECRET")
		if !exists(w.path("secret/w")) {
			t.Fatal("control: the write through the real path did not land")
		}
	})
}
