//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

const noNetwork = `"network":{"allowedDomains":[],"deniedDomains":[]}`

// plain is a configuration with no network and the default filesystem
// rules (read everything, write nowhere).
const plain = `{` + noNetwork + `,"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`

// startUp starts command, which must print "up" once it is ready, and
// returns once it has.
func startUp(t *testing.T, m *sandbox.Manager, ctx context.Context, command string) (*sandbox.Cmd, *bufio.Reader) {
	t.Helper()
	cmd, err := m.Command(ctx, command)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Release() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { r.Close() })
	out := bufio.NewReader(r)
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	if line, err := out.ReadString('\n'); line != "up\n" {
		t.Fatalf("the command did not start: %q %v", line, err)
	}
	return cmd, out
}

// waitDone waits for the command's end, at most 20 s.
func waitDone(t *testing.T, cmd *sandbox.Cmd) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(20 * time.Second):
		t.Fatal("the sandbox did not end")
	}
}

// processWithArg reports whether a live process has arg among its
// arguments.
func processWithArg(arg string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(data), "\x00") {
			if a == arg {
				return true
			}
		}
	}
	return false
}

func TestCancellingTheContextEndsTheSandbox(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A grandchild in its own session and process group, which no signal
	// to the command's group reaches: the sandbox's end must take it too.
	cmd, _ := startUp(t, m, ctx, `setsid sleep 3117 & echo up; sleep 3118`)
	for i := 0; !(processWithArg("3117") && processWithArg("3118")); i++ {
		if i == 250 {
			t.Fatal("the sleeps are not running")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	waitDone(t, cmd)
	<-cmd.Done()
	deadline := time.Now().Add(5 * time.Second)
	for (processWithArg("3117") || processWithArg("3118")) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if processWithArg("3117") || processWithArg("3118") {
		t.Fatal("a process of the sandbox outlived the cancelled context")
	}
}

func TestSignalReachesTheCommand(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	cmd, out := startUp(t, m, context.Background(), `trap 'echo got TERM; exit 3' TERM; echo up; while :; do sleep 0.05; done`)
	if err := cmd.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	line, _ := out.ReadString('\n')
	waitDone(t, cmd)
	if code, ok := cmd.Status(); line != "got TERM\n" || !ok || code != 3 {
		t.Fatalf("after SIGTERM: %q, status %d %v", line, code, ok)
	}
	if !cmd.Started() {
		t.Error("Started is false for a command that ran")
	}
	// Released, there is nothing to signal, and Signal says so.
	cmd.Release()
	if err := cmd.Signal(syscall.SIGTERM); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("Signal after Release: %v", err)
	}
}

func TestSignalledCommandReports128PlusN(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	out, code := run(t, m, `kill -USR1 $$`)
	if code != 128+int(syscall.SIGUSR1) {
		t.Fatalf("status %d (%q), want %d", code, out, 128+int(syscall.SIGUSR1))
	}
}

func TestWithEnvReplacesTheEnvironment(t *testing.T) {
	t.Setenv("SRT_HOST_ONLY", "leaked")
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	out, _ := run(t, m, `echo "${FOO-unset} ${SRT_HOST_ONLY-unset} $TMPDIR"`,
		sandbox.WithEnv([]string{"FOO=bar", "PATH=/usr/bin:/bin"}))
	tmp := "/dev/shm"
	if os.Getenv("SRT_TEST_BACKEND") == "landlock" {
		tmp = filepath.Join(os.TempDir(), "srt-"+strconv.Itoa(os.Getuid()), "tmp-") // in srt's state directory
	}
	if !strings.HasPrefix(out, "bar unset "+tmp) {
		t.Fatalf("environment: %q", out)
	}
}

func TestWithDirAndRelativeSettings(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Mkdir(filepath.Join(dir, "out"), 0o777)
	// "./out" in allowWrite is the command's directory's out.
	m := newManager(t, parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":["./out"],"denyWrite":[]}}`), sandbox.Options{})
	defer m.Close()
	out, code := run(t, m, `pwd; echo x > out/f && echo wrote; { echo y > g; } 2>/dev/null || echo refused`, sandbox.WithDir(dir))
	if code != 0 || out != dir+"\nwrote\nrefused\n" {
		t.Fatalf("%q (status %d)", out, code)
	}
}

func TestWithFilesystemOverridesTheRules(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.Chmod(a, 0o777)
	os.Chmod(b, 0o777)
	m := newManager(t, parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":["`+a+`"],"denyWrite":[]}}`), sandbox.Options{})
	defer m.Close()
	// (An open for writing, not touch: the Landlock backend lets the
	// owner set an existing file's times anywhere, docs/security.md.)
	try := `for d in ` + a + " " + b + `; do { : >> $d/f; } 2>/dev/null && echo yes || echo no; done`
	if out, _ := run(t, m, try); out != "yes\nno\n" {
		t.Fatalf("settings' rules: %q", out)
	}
	fs := settings.Filesystem{AllowWrite: []settings.PathEntry{{Path: b}}}
	if out, _ := run(t, m, try, sandbox.WithFilesystem(fs)); out != "no\nyes\n" {
		t.Fatalf("overridden rules: %q", out)
	}
	if out, _ := run(t, m, `touch /etc/srt-override-test 2>/dev/null && echo yes; rm -f /etc/srt-override-test; echo done`, sandbox.WithFilesystem(settings.Filesystem{Disabled: true})); os.Geteuid() == 0 && out != "yes\ndone\n" {
		t.Fatalf("a disabled filesystem sandbox still confined root: %q", out)
	}
}

func TestWithNullDescriptor(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	out, _ := run(t, m, `readlink /proc/$$/fd/7`, sandbox.WithNullDescriptor(7))
	if out != "/dev/null\n" {
		t.Fatalf("descriptor 7: %q", out)
	}
}

func TestWithNestedUserNamespaces(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	defer m.Close()
	try := `unshare -U true 2>&1 && echo created`
	if out, _ := run(t, m, try); strings.Contains(out, "created") || !strings.Contains(out, "Operation not permitted") {
		t.Fatalf("a user namespace was created by default: %q", out)
	}
	if os.Geteuid() == 0 {
		// Refused up front for root (TestNestedAsUnprivilegedUser runs
		// this test as a user).
		if _, err := m.Command(context.Background(), try, sandbox.WithNestedUserNamespaces(true)); !errors.Is(err, sandbox.ErrInvalidConfig) || !strings.Contains(err.Error(), "WithNestedUserNamespaces(true)") {
			t.Fatalf("root's override: %v", err)
		}
		return
	}
	if out, _ := run(t, m, try, sandbox.WithNestedUserNamespaces(true)); out != "created\n" {
		t.Fatalf("allowed by the per-command override, but: %q", out)
	}
}

func TestCommandsAfterCloseAreRefused(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	m.Close()
	if _, err := m.Command(context.Background(), "true"); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Command after Close: %v", err)
	}
}

// A command that connects to its proxy and ends at once, released at once:
// srt is still starting the proxy for that connection, and hands the
// sandbox's sockets over after the command has gone. Release waits for
// that hand-over, so it never meets sockets Release closed (srt then said
// "could not take the sandbox's listeners", and could have sent srt-proxy
// another descriptor of its own reused under the number).
func TestReleaseWhileTheProxyStarts(t *testing.T) {
	for i := range 3 {
		var warnings lockedBuffer
		m := newManager(t, parse(t, plain), sandbox.Options{Warnings: &warnings})
		cmd, err := m.Command(context.Background(), `exec 3<>/dev/tcp/127.0.0.1/3128`)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Run()
		cmd.Release()
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if w := warnings.String(); strings.Contains(w, "could not") {
			t.Fatalf("run %d: %s", i, w)
		}
	}
}

// TestReleaseWhileTheProxyStartsAsUnprivilegedUser runs it as the test
// user.
func TestReleaseWhileTheProxyStartsAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestReleaseWhileTheProxyStarts", "sandbox-release.test")
}

// WithPassFile gives the command a descriptor at the number named, and
// refuses the numbers and files it cannot give before anything starts.
func TestWithPassFile(t *testing.T) {
	m := newManager(t, parse(t, plain), sandbox.Options{})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.WriteString("passed\n")
	w.Close()
	if out, _ := run(t, m, `cat <&7`, sandbox.WithPassFile(7, r)); out != "passed\n" {
		t.Fatalf("descriptor 7: %q", out)
	}
	for _, c := range []struct {
		opts []sandbox.CommandOption
		want string
	}{
		{[]sandbox.CommandOption{sandbox.WithPassFile(2, r)}, "sandbox: WithPassFile: descriptor 2 is out of range; a command may be given descriptors 3 to 8"},
		{[]sandbox.CommandOption{sandbox.WithPassFile(9, r)}, "sandbox: WithPassFile: descriptor 9 is out of range; a command may be given descriptors 3 to 8"},
		{[]sandbox.CommandOption{sandbox.WithPassFile(3, nil)}, "sandbox: WithPassFile: descriptor 3 has no file"},
		{[]sandbox.CommandOption{sandbox.WithPassFile(3, r), sandbox.WithPassFile(3, r)}, "sandbox: WithPassFile: descriptor 3 is given twice"},
		{[]sandbox.CommandOption{sandbox.WithNullDescriptor(4), sandbox.WithPassFile(4, r)}, "sandbox: WithPassFile: descriptor 4 is also the null descriptor"},
	} {
		if _, err := m.Command(context.Background(), "true", c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("want %q, got %v", c.want, err)
		}
	}
}
