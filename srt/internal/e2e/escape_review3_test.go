//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Attacks of the third fresh hostile review of issue 10, on the last fixes
// (stdio checks, shared placeholders, read-only /proc, $HOME start-up
// files). TestReview3Escape… tests try an attack that got out when they
// were written (each is closed now, and the test keeps it closed). Its
// third finding, a forged placeholder marker that had srt remove an empty
// file of the user's, is tested in escape_marker_test.go.

// stdinShell runs command with sh in the sandbox (settings) with the file
// at path, opened read-only by the caller, as its standard input.
func (w *workspace) stdinShell(t *testing.T, settingsJSON, path, command string) result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := w.command(nil, "-s", w.settings(settingsJSON), "-c", command)
	cmd.Stdin = f
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// TestReview3EscapeStdinReopen hands the command a write-protected file as
// its standard input, opened read-only (`srt … < .git/config`). The
// descriptor points at the host's own mount of the file, not at srt's
// read-only bind over it, so opening /proc/self/fd/0 for writing re-opens
// the file through that mount: Landlock allows it (the file lies below an
// allowWrite root) and the mount is writable. Every protection made of a
// read-only mount falls: a denyWrite entry, .git/config, ~/.bashrc under
// allowWrite ["~"]. checkStdio looks at the kind of descriptor only, not
// at the mount it leads to.
func TestReview3EscapeStdinReopen(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		cases := []struct{ name, file, fs string }{
			{"denyWrite", "home/proj/prot.txt", `{"denyRead":[],"denyWrite":["prot.txt"],"allowWrite":["."]}`},
			{"git config", "home/proj/.git/config", writeCwd},
			{"home bashrc", "home/.bashrc", `{"denyRead":[],"denyWrite":[],"allowWrite":["~"]}`},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p := w.write(c.file, "ORIGINAL\n")
				s := fsSettings(c.fs)
				// The protection holds against a direct write.
				expect(t, w.sh(s, "echo direct >> "+p), 1, refusedText("EROFS"))
				r := w.stdinShell(t, s, p, "echo PLANTED > /proc/self/fd/0")
				if b, _ := os.ReadFile(p); string(b) != "ORIGINAL\n" {
					t.Errorf("ESCAPE: %s, given read-only as stdin, was rewritten through /proc/self/fd/0: %q\n%s", c.file, b, r)
				}
				if testBackend == "landlock" {
					// No mount to lead past: Landlock refuses the reopen.
					expect(t, r, 1, "/proc/self/fd/0: "+refusedText("EROFS"))
					return
				}
				// srt refuses to hand it over, and says what to do.
				expect(t, r, 1, "srt: standard input is the file "+p+", opened read-only, which the sandbox may not write; the command could open it again for writing through /proc/self/fd/0", "cat FILE | srt")
			})
		}
		// Control: the same re-open writes a file no rule protects.
		p := w.write("home/proj/free.txt", "ORIGINAL\n")
		expect(t, w.stdinShell(t, fsSettings(writeCwd), p, "echo PLANTED > /proc/self/fd/0"), 0)
		if b, _ := os.ReadFile(p); string(b) != "PLANTED\n" {
			t.Fatalf("control: the re-open did not write an unprotected file: %q", b)
		}
	})
}

// TestReview3EscapeHomeToolConfig plants, with allowWrite ["~"], the
// configuration of tools a developer machine has (this one has all three)
// that runs a program of the file's choosing, none in the $HOME table:
// ~/.config/go/env (GOFLAGS=-toolexec, CC: every go build runs it; the
// table has cargo's equivalent), ~/.gdbinit ("shell …" at every gdb start)
// and ~/.kube/config (an exec credential plugin, at every kubectl call).
// Then the real tool runs on the host, as the runner, and the planted
// program must not run. Control: the same files written outside the
// sandbox make each tool run the program.
func TestReview3EscapeHomeToolConfig(t *testing.T) {
	for _, tool := range []string{"go", "gdb", "kubectl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: this test needs it", tool)
		}
	}
	forEach(t, func(t *testing.T, w *workspace) {
		marker := w.path("home/ran") // the runner may create it
		evil := w.write("evil.sh", "#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexit 0\n")
		os.Chmod(evil, 0o755)
		plants := []struct{ rel, content string }{
			{".config/go/env", "GOFLAGS=-toolexec=" + evil + "\n"},
			{".gdbinit", "shell " + evil + " gdbinit\n"},
			{".kube/config", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
				"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: " + evil + ", args: [kubectl], interactiveMode: Never}}}]\n" +
				"contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"},
		}
		// host runs the tools as the runner, with the workspace's $HOME.
		host := func() string {
			w.write("home/ran", "") // owned by the runner, who appends
			for _, argv := range [][]string{{"go", "env", "GOFLAGS"}, {"gdb", "-batch", "-ex", "quit"}, {"kubectl", "get", "ns", "--request-timeout=2s"}} {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = w.env("GOTOOLCHAIN=local")
				cmd.Dir = w.dir
				w.asRunner(cmd)
				out, _ := cmd.CombinedOutput()
				if argv[0] == "go" && strings.Contains(string(out), evil) {
					os.WriteFile(marker, append(readFileOr(marker), []byte("go reads GOFLAGS="+strings.TrimSpace(string(out))+"\n")...), 0o666)
				}
			}
			return string(readFileOr(marker))
		}
		var script strings.Builder
		for _, p := range plants {
			script.WriteString("mkdir -p ~/" + filepath.Dir(p.rel) + " && printf '%s' '" + p.content + "' > ~/" + p.rel + "\n")
		}
		r := w.sh(fsSettings(`{"denyRead":[],"denyWrite":[],"allowWrite":["~"]}`), script.String())
		if ran := host(); ran != "" {
			t.Errorf("ESCAPE: files planted in $HOME by the sandbox make host tools run a program:\n%s\n%s", ran, r)
		}
		// Control: the same plants written on the host run.
		for _, p := range plants {
			w.write("home/"+p.rel, p.content)
		}
		ran := host()
		for _, want := range []string{"go reads GOFLAGS=-toolexec", "gdbinit", "kubectl"} {
			if !strings.Contains(ran, want) {
				t.Fatalf("control: %q did not run from a plant written on the host:\n%s", want, ran)
			}
		}
	})
}

func readFileOr(p string) []byte {
	b, _ := os.ReadFile(p)
	return b
}
