//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/sandbox"
)

// TestCmdBehavesLikeExecCmd: a Go programmer's habits with *exec.Cmd are
// right with *sandbox.Cmd: unset stdio is /dev/null, Output and
// CombinedOutput work, and Done closes on every path.
func TestCmdBehavesLikeExecCmd(t *testing.T) {
	dir, err := os.MkdirTemp("", "srt-execlike-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777) // the unprivileged rerun writes here too
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := newManager(t, parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":["`+dir+`"],"denyWrite":[]}}`), sandbox.Options{})
	defer m.Close()
	command := func(t *testing.T, ctx context.Context, command string) *sandbox.Cmd {
		t.Helper()
		cmd, err := m.Command(ctx, command)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Release() })
		return cmd
	}

	t.Run("unset stdio is /dev/null", func(t *testing.T) {
		// The process's own stdio are pipes here, so that a command that
		// took them instead would show.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		saved := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
		os.Stdin, os.Stdout, os.Stderr = r, w, w
		out := filepath.Join(dir, "stdio")
		cmd := command(t, context.Background(), `echo leaked; echo leaked >&2; readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 > `+out)
		err = cmd.Run()
		os.Stdin, os.Stdout, os.Stderr = saved[0], saved[1], saved[2]
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); string(got) != "/dev/null\n/dev/null\n/dev/null\n" {
			t.Errorf("stdin, stdout, stderr of a command with none set: %q, want /dev/null each", got)
		}
		if leaked, _ := readAll(r); leaked != "" {
			t.Errorf("the command wrote to the host process's own stdio: %q", leaked)
		}
	})

	t.Run("Output", func(t *testing.T) {
		cmd := command(t, context.Background(), `echo out; echo err >&2`)
		out, err := cmd.Output()
		if err != nil || string(out) != "out\n" {
			t.Fatalf("Output: %q, %v", out, err)
		}
		doneWithin(t, cmd)
		if code, ok := cmd.Status(); !ok || code != 0 {
			t.Errorf("status %d %v", code, ok)
		}
		// A failure carries the command's stderr, as exec's does.
		cmd = command(t, context.Background(), `echo partial; echo oops >&2; exit 3`)
		out, err = cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(ee.Stderr) != "oops\n" || string(out) != "partial\n" {
			t.Fatalf("Output of a failing command: %q, %v (%T)", out, err, err)
		}
		doneWithin(t, cmd)
		// Stdout already set: refused, as exec refuses it.
		cmd = command(t, context.Background(), `true`)
		cmd.Stdout = os.Stderr
		if _, err := cmd.Output(); err == nil {
			t.Fatal("Output with Stdout set: no error")
		}
	})

	t.Run("CombinedOutput", func(t *testing.T) {
		cmd := command(t, context.Background(), `echo one; echo two >&2; echo three`)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "one\ntwo\nthree\n" {
			t.Fatalf("CombinedOutput: %q, %v", out, err)
		}
		doneWithin(t, cmd)
	})

	t.Run("Done closes when Start fails", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		cmd := command(t, ctx, `true`)
		if err := cmd.Start(); err == nil {
			t.Fatal("Start with a cancelled context: no error")
		}
		doneWithin(t, cmd)
		if _, ok := cmd.Status(); ok || cmd.Started() {
			t.Error("a command that never started has a status")
		}
		if err := cmd.Start(); err == nil {
			t.Error("a second Start after a failed one: no error")
		}
	})

	t.Run("Done closes when released unstarted", func(t *testing.T) {
		cmd := command(t, context.Background(), `true`)
		cmd.Release()
		doneWithin(t, cmd)
		if err := cmd.Start(); err == nil {
			t.Error("Start after Release: no error")
		}
	})
}

// TestCmdBehavesLikeExecCmdAsUnprivilegedUser runs it again as the
// unprivileged test user.
func TestCmdBehavesLikeExecCmdAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestCmdBehavesLikeExecCmd", "sandbox-execlike.test")
}

// doneWithin fails unless cmd's Done is closed within 20 s.
func doneWithin(t *testing.T, cmd *sandbox.Cmd) {
	t.Helper()
	select {
	case <-cmd.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("Done was not closed")
	}
}

// readAll reads r to its end.
func readAll(r *os.File) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}
