//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/sandbox"
)

// TestUpdateConfigInForce is item 14 of issue 14: UpdateConfig returned
// before the decider had the new lists, so a connection made right after
// it could still be decided by the old ones (tests slept, and a host could
// not know when a list was in force). Now it returns once the decider
// confirms them. The update here is large (150 000 entries, which the
// decider takes a while to parse), and the command's next connection
// follows the return at once: it must be decided by the new list. The
// control is the connection before the update, refused.
func TestUpdateConfigInForce(t *testing.T) {
	work := t.TempDir()
	fifo := filepath.Join(work, "go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, parse(t, `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`), sandbox.Options{})
	defer m.Close()
	cmd, err := m.Command(context.Background(), curlCode+`http://other.test/; read x < `+fifo+`; `+curlCode+`http://other.test/`, sandbox.WithDir(work))
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Release()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "\n") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if out.String() != "403\n" {
		t.Fatalf("control: before the update, other.test must be refused: %q", out.String())
	}
	var list strings.Builder
	for i := 0; i < 150000; i++ {
		fmt.Fprintf(&list, `"h%d.example.com",`, i)
	}
	if err := m.UpdateConfig(parse(t, `{"network":{"allowedDomains":[`+list.String()+`"other.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)); err != nil {
		t.Fatal(err)
	}
	// The command waits in the fifo's open: without a reader there (it
	// failed), opening without blocking fails, and the test with it.
	var f *os.File
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if f, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command does not read %s: %v (output %q)", fifo, err, out.String())
		}
	}
	f.WriteString("\n")
	f.Close()
	cmd.Wait()
	if out.String() != "403\n502\n" {
		t.Errorf("the connection right after UpdateConfig returned: want 403 then 502 (allowed, no such host), got %q", out.String())
	}
}

// TestUpdateConfigInForceAsUnprivilegedUser runs it as the test user.
func TestUpdateConfigInForceAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestUpdateConfigInForce", "sandbox-update.test")
}

// TestMissingPathWarnedOnce (issue 14, item 9): an allowWrite path that
// does not exist is named on Options.Warnings, once in the Manager's life
// however many commands run; the command still runs. The control: an
// existing path draws no warning.
func TestMissingPathWarnedOnce(t *testing.T) {
	for _, c := range []struct {
		entry string
		warns int
	}{{"./buidl", 1}, {".", 0}} {
		dir := t.TempDir()
		var warnings lockedBuffer
		m := newManager(t, parse(t, `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["`+c.entry+`"],"denyWrite":[]}}`), sandbox.Options{Warnings: &warnings})
		for i := 0; i < 3; i++ {
			if out, code := run(t, m, "true", sandbox.WithDir(dir)); code != 0 {
				t.Fatalf("%s: the command failed (%d): %s\n%s", c.entry, code, out, warnings.String())
			}
		}
		m.Close()
		line := `srt: warning: filesystem.allowWrite names paths that do not exist, so they grant nothing; make them before srt starts (a path made later stays read-only in the sandbox), or correct the entries: "./buidl" (` + filepath.Join(dir, "buidl") + ")\n"
		if n := strings.Count(warnings.String(), "do not exist"); n != c.warns || c.warns == 1 && !strings.Contains(warnings.String(), line) {
			t.Errorf("allowWrite %q over 3 commands: want %d warning(s) about missing paths, got %d:\n%s", c.entry, c.warns, n, warnings.String())
		}
	}
}

// TestMissingPathWarnedOnceAsUnprivilegedUser runs it as the test user.
func TestMissingPathWarnedOnceAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestMissingPathWarnedOnce", "sandbox-missing.test")
}

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
