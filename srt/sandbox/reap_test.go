//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// TestNoProcessOutlivesTheHost: a host that uses the library as documented
// (Wait or Done, then Release; Close at the end) has reaped every process
// srt started for it by the time it exits. It runs this test binary as
// such a host (libraryHost) under a parent that is a child subreaper, as
// in a container whose PID 1 is the agent host, which reports any process
// handed to it.
func TestNoProcessOutlivesTheHost(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(companions, "subreaper"), "-n", "3", "--", self)
	cmd.Env = append(os.Environ(), "SRT_TEST_LIBRARY_HOST="+companions)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "subreaper:") {
		t.Fatalf("the host left processes behind (or failed): %v\n%s", err, out)
	}
}

// TestNoProcessOutlivesTheHostAsUnprivilegedUser runs it again as the
// unprivileged test user.
func TestNoProcessOutlivesTheHostAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestNoProcessOutlivesTheHost", "sandbox-reap.test")
}

// libraryHost is a host program: it runs commands every documented way,
// one of them using the network (so that decider and srt-proxy run), and
// exits. Its exit status is 0 when every step went as documented.
func libraryHost(companions string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "library host: "+format+"\n", a...)
		return 1
	}
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		return fail("%v", err)
	}
	m, err := sandbox.New(cfg, sandbox.Options{DeciderExecutable: filepath.Join(companions, "decider"), ProxyExecutable: filepath.Join(companions, "srt-proxy")})
	if err != nil {
		return fail("%v", err)
	}
	defer m.Close()
	ways := []struct {
		name, command string
		run           func(*sandbox.Cmd) error
	}{
		{"Run", "true", (*sandbox.Cmd).Run},
		{"Output", "echo hi", func(c *sandbox.Cmd) error { _, err := c.Output(); return err }},
		{"Start, Done, no Wait", "true", func(c *sandbox.Cmd) error {
			if err := c.Start(); err != nil {
				return err
			}
			<-c.Done()
			return nil
		}},
		{"background processes", "sleep 3120 & setsid sleep 3120 & true", (*sandbox.Cmd).Run},
		{"network", `curl -s -o /dev/null -w "%{http_code}\n" http://denied.test/`, (*sandbox.Cmd).Run},
	}
	for _, w := range ways {
		cmd, err := m.Command(context.Background(), w.command)
		if err != nil {
			return fail("%s: %v", w.name, err)
		}
		err = w.run(cmd)
		if code, ok := cmd.Status(); err != nil || !ok || code != 0 {
			return fail("%s: %v, status %d %v", w.name, err, code, ok)
		}
		if err := cmd.Release(); err != nil {
			return fail("%s: Release: %v", w.name, err)
		}
	}
	return 0
}
