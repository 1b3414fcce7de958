package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's first example is what a new user runs first: it runs here
// as printed, in one shell, with no settings file, and must print what the
// README shows (stdout and stderr as a terminal interleaves them) and end
// with the status it shows.
func TestREADMEFirstExample(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, want := consoleBlock(t, string(readme), "## A first sandboxed command")
	if !strings.HasPrefix(script, "srt ") {
		t.Fatalf("the README's first example does not start with srt: %q", script)
	}
	forEach(t, func(t *testing.T, w *workspace) {
		if _, err := os.Stat(filepath.Join(w.home, ".srt-settings.json")); err == nil {
			t.Fatal("the workspace has a settings file; the example runs without one")
		}
		cmd := exec.Command("/bin/bash", "-c", script)
		cmd.Dir = w.dir
		cmd.Env = w.env("PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
		if os.Geteuid() == 0 && w.r.uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}}
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out // one pipe, as a terminal
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the README's example did not finish in 60 s:\n%s", out.String())
		}
		if err != nil {
			t.Fatalf("the README's example: %v\n%s", err, out.String())
		}
		if out.String() != want {
			t.Errorf("the README's first example prints\n%s\nnot what README.md shows:\n%s", out.String(), want)
		}
	})
}

// consoleBlock returns the commands ("$ " lines, joined as a script) and the
// output (every other line) of the first console block after heading.
func consoleBlock(t *testing.T, doc, heading string) (script, output string) {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q", heading)
	}
	_, block, ok := strings.Cut(after, "```console\n")
	if !ok {
		t.Fatalf("README.md has no console block after %q", heading)
	}
	block, _, ok = strings.Cut(block, "```\n")
	if !ok {
		t.Fatal("README.md's console block does not end")
	}
	var cmds, out []string
	for _, line := range strings.SplitAfter(block, "\n") {
		if c, ok := strings.CutPrefix(line, "$ "); ok {
			cmds = append(cmds, c)
		} else if line != "" {
			out = append(out, line)
		}
	}
	if len(cmds) == 0 || len(out) == 0 {
		t.Fatalf("README.md's console block has %d commands and %d lines of output", len(cmds), len(out))
	}
	return strings.Join(cmds, ""), strings.Join(out, "")
}
