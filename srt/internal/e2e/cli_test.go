//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/version"
)

func TestExitStatusPassesThrough(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.srt("-c", "exit 42"), 42)
		expect(t, w.srt("-c", "kill -9 $$"), 137)
		expect(t, w.srt("-c", "kill -TERM $$"), 143)
		expect(t, w.srt("true"), 0)
		expect(t, w.srt("false"), 1)
		expect(t, w.srt("-c", "no-such-command-xyz"), 127, "no-such-command-xyz: command not found")
	})
}

func TestArgumentsAreQuoted(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.srt("--", "echo", "a b", "$HOME", "it's", "!x", "")
		expect(t, r, 0)
		if r.stdout != "a b $HOME it's !x \n" {
			t.Fatalf("got %q", r.stdout)
		}
		// Flags are read only before the command.
		r = w.srt("echo", "-c", "hi")
		expect(t, r, 0)
		if r.stdout != "-c hi\n" {
			t.Fatalf("got %q", r.stdout)
		}
		r = w.srt("-c", "echo $((1+2)) | tr 3 x")
		expect(t, r, 0)
		if r.stdout != "x\n" {
			t.Fatalf("shell syntax in -c: got %q", r.stdout)
		}
		r = w.srt("-c", "echo one", "echo", "two")
		expect(t, r, 0, "warning: -c was given, so the command arguments (echo two) are ignored")
		if r.stdout != "one\n" {
			t.Fatalf("got %q", r.stdout)
		}
	})
}

func TestUsage(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		// A usage error is said on stderr only: under an .mcp.json, stdout
		// is the JSON-RPC stream.
		for _, c := range []struct {
			args []string
			msg  string
		}{
			{[]string{"--bogus", "true"}, "srt: flag provided but not defined: -bogus\n"},
			{[]string{"-s"}, "srt: flag needs an argument: -s\n"},
			{[]string{"-c"}, "srt: flag needs an argument: -c\n"},
			{[]string{"--control-fd"}, "srt: flag needs an argument: -control-fd\n"},
			{[]string{"--violations-fd"}, "srt: flag needs an argument: -violations-fd\n"},
			{[]string{"--control-fd", "x", "true"}, "srt: option '--control-fd <fd>' argument 'x' is invalid."},
			{[]string{"--violations-fd", "1", "true"}, "srt: --violations-fd needs a descriptor number of 3 or more (got \"1\")\n"},
			{nil, "srt: no command given"},
		} {
			r := w.srt(c.args...)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, c.msg) || !strings.HasSuffix(r.stderr, "\nRun 'srt --help' for usage.\n") {
				t.Errorf("srt %q: want exit 1, nothing on stdout, %q and the hint to --help on stderr; got %s", c.args, c.msg, r)
			}
		}
		r := w.srt("--version")
		expect(t, r, 0)
		if r.stdout != version.Version+"\n" || r.stderr != "" {
			t.Fatalf("--version should print the bare version to stdout only: %s", r)
		}
		expect(t, w.srt("--help"), 0, "--settings", "--debug", "-c COMMAND")
	})
}

func TestDebugGoesToStderrOnly(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.srt("-d", "-c", "echo out")
		expect(t, r, 0, "srt: debug:", "No config found at")
		if r.stdout != "out\n" {
			t.Fatalf("stdout must hold only the command's output: %q", r.stdout)
		}
		// -d is the same as SRT_DEBUG=1, which the command also sees.
		r = w.srt("-d", "-c", "echo $SRT_DEBUG")
		if r.stdout != "1\n" {
			t.Fatalf("SRT_DEBUG inside: %q", r.stdout)
		}
		r = w.srtEnv([]string{"SRT_DEBUG=1"}, "true")
		expect(t, r, 0, "srt: debug:")
	})
}

// TestDebugLineFormat pins the debug lines' format: "srt: debug: ", the
// message, then key=value pairs, a value with a space or a quote quoted
// as a Go string.
func TestDebugLineFormat(t *testing.T) {
	skipOnLandlock(t)
	dir, err := os.MkdirTemp("", "srt e2e bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	bwrap := filepath.Join(dir, "bwrap")
	sys, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	if err := copyFile(sys, bwrap); err != nil {
		t.Fatal(err)
	}
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.srt("-d", "-s", w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"bwrapPath":"`+bwrap+`"}`), "true")
		expect(t, r, 0)
		q := strconv.Quote(bwrap)
		for _, want := range []string{
			"srt: debug: sandbox ready bwrap=" + q + " init=" + filepath.Join(bin, "srt-init") + "\n",
			"srt: debug: bubblewrap checked bwrap=" + q + " version=",
			"\nsrt: debug: plan:\nroot host-ro\n",
			"\n\nsrt: debug: layers: user, mount, PID, IPC and network namespaces; ",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Fatalf("debug output lacks %q:\n%s", want, r)
			}
		}
		if r.stdout != "" {
			t.Fatalf("stdout: %q", r.stdout)
		}
	})
}

// TestDebugMasksProxyPassword (issue 14, item 18): srt -d printed the
// run's proxy password in the plan's environment lines. The command shows
// it (the control: it has one); srt's debug output, the network proxy's
// decision lines included, must not.
func TestDebugMasksProxyPassword(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{"x.test"}, nil, ""))
		r := w.srt("-d", "-s", s, "-c", `echo "$CLOUDSDK_PROXY_PASSWORD"; curl -s -o /dev/null http://x.test/`)
		pw := strings.TrimSpace(r.stdout)
		if len(pw) < 16 {
			t.Fatalf("control: the command has no proxy password: %s", r)
		}
		expect(t, r, 0, "setenv CLOUDSDK_PROXY_PASSWORD=***\n", ":***@localhost:3128\n", "srt: debug: decision")
		if strings.Contains(r.stderr, pw) {
			t.Errorf("the debug output shows the proxy password %s:\n%s", pw, r.stderr)
		}
	})
}
