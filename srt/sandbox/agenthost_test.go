//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/internal/proctab"
	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// companions holds decider and srt-proxy, built for these tests.
var companions string

func TestMain(m *testing.M) {
	// The host program of TestNoProcessOutlivesTheHost.
	if dir := os.Getenv("SRT_TEST_LIBRARY_HOST"); dir != "" {
		os.Exit(libraryHost(dir))
	}
	// A child run as the unprivileged user finds the binaries here.
	if dir := os.Getenv("SRT_TEST_COMPANIONS"); dir != "" {
		companions = dir
		sandbox.SetTestCompanions(dir)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "srt-sandbox-test-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", dir+"/", "github.com/srt-sandbox/decider/cmd/decider", "github.com/srt-sandbox/srt-proxy/cmd/srt-proxy", "github.com/srt-sandbox/srt/internal/e2e/subreaper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the companions:", err)
		os.Exit(1)
	}
	companions = dir
	sandbox.SetTestCompanions(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newManager(t *testing.T, cfg *settings.Config, opts sandbox.Options) *sandbox.Manager {
	t.Helper()
	opts.DeciderExecutable = filepath.Join(companions, "decider")
	opts.ProxyExecutable = filepath.Join(companions, "srt-proxy")
	if b := os.Getenv("SRT_TEST_BACKEND"); b != "" && opts.Backend == "" {
		// scripts/test runs these tests again under the Landlock
		// backend (as root with the opt-in it needs).
		opts.Backend = b
		if b == settings.BackendLandlock && os.Geteuid() == 0 {
			opts.AllowWeaker = append(opts.AllowWeaker, "root")
		}
	}
	m, err := sandbox.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func parse(t *testing.T, s string) *settings.Config {
	t.Helper()
	cfg, err := settings.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// run runs a command to the end and returns its output and status. A
// command that has not ended after runLimit fails the test, saying what it
// printed, and is ended (its status is then -1): a hang is reported in
// minutes, not by the test binary's timeout.
func run(t *testing.T, m *sandbox.Manager, command string, opts ...sandbox.CommandOption) (string, int) {
	t.Helper()
	cmd, err := m.Command(context.Background(), command, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &out, nil
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Run()
	}()
	select {
	case <-done:
	case <-time.After(runLimit):
		t.Errorf("%q has not ended after %v; it printed %q", command, runLimit, out.String())
		go cmd.Release() // ends the sandbox
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%q did not end once released", command)
		}
		return out.String(), -1
	}
	defer cmd.Release()
	code, ok := cmd.Status()
	if !ok {
		t.Fatalf("%q: no status\n%s", command, out.String())
	}
	return out.String(), code
}

// runLimit bounds a command of run: those of these tests end in seconds,
// even on a loaded machine.
const runLimit = 2 * time.Minute

const curlCode = `curl -s -o /dev/null -w "%{http_code}\n" --noproxy "" `

// TestAgentHost uses the library as an agent host would: many commands at
// once, each with its own allow list and attribution, an ask callback that
// allows one host and refuses another with a reason, a config update
// mid-run, and a shutdown that leaves nothing behind.
func TestAgentHost(t *testing.T) {
	work := t.TempDir()
	os.Chmod(work, 0o755)
	mountsBefore := mounts(t)
	cfg := parse(t, `{"network":{"allowedDomains":[],"deniedDomains":["denied.test"]},"filesystem":{"denyRead":[],"allowWrite":["`+work+`"],"denyWrite":[]}}`)
	var askMu sync.Mutex
	var asked []string
	var seenMu sync.Mutex
	var seen []string
	m := newManager(t, cfg, sandbox.Options{
		Warnings: io.Discard,
		OnViolation: func(v sandbox.Violation) {
			seenMu.Lock()
			seen = append(seen, v.Line)
			seenMu.Unlock()
		},
		Ask: func(r sandbox.AskRequest) (bool, string, error) {
			askMu.Lock()
			asked = append(asked, fmt.Sprintf("%s:%d", r.Host, r.Port))
			askMu.Unlock()
			switch r.Host {
			case "ask-allow.test":
				return true, "", nil
			case "ask-deny.test":
				return false, "not today <b>\nplease", nil
			case "ask-error.test":
				return true, "", errors.New("the prompt crashed")
			}
			return false, "", nil
		},
	})

	// Commands with their own lists, at once.
	const n = 6
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("agent-command-%02d-0123456789abcdef", i)
		if err := m.RegisterCommandNetwork(ids[i], []string{fmt.Sprintf("cmd-%d.test", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RegisterCommandNetwork("short", nil); err == nil {
		t.Fatal("a 5-character command id was accepted")
	}
	var wg sync.WaitGroup
	outs := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			other := (i + 1) % n
			outs[i], _ = run(t, m, curlCode+fmt.Sprintf("http://cmd-%d.test/; ", i)+curlCode+fmt.Sprintf("http://cmd-%d.test/", other),
				sandbox.WithCommandID(ids[i]), sandbox.WithDir(work))
		}(i)
	}
	wg.Wait()
	m.SyncViolations()
	for i := 0; i < n; i++ {
		// Its own host is allowed (502: no such host here); the next
		// command's is not.
		if outs[i] != "502\n403\n" {
			t.Errorf("command %d: %q", i, outs[i])
		}
		vs := m.Violations().ForKey(ids[i])
		// With an ask callback, what no list allows is asked about, and
		// the callback's plain refusal reads "user denied".
		want := fmt.Sprintf("deny network-outbound cmd-%d.test:80 (user denied)", (i+1)%n)
		if len(vs) != 1 || vs[0].Line != want {
			t.Errorf("command %d's violations: %+v, want one %q", i, vs, want)
		}
	}
	// Unregistered, a command's list is gone: its own host is refused
	// (asked about, and the callback refuses) like anyone's.
	if err := m.UnregisterCommandNetwork(ids[0]); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(t, m, curlCode+"http://cmd-0.test/", sandbox.WithCommandID(ids[0]), sandbox.WithDir(work)); out != "403\n" {
		t.Errorf("after UnregisterCommandNetwork: %q", out)
	}
	if err := m.UnregisterCommandNetwork("never-registered-0123456789"); err != nil {
		t.Errorf("an id with no list: %v", err)
	}

	// The ask callback: consulted for what no rule decides, never for a
	// denied host; its reason is sanitised.
	out, _ := run(t, m, curlCode+"http://ask-allow.test/; curl -sv https://ask-deny.test/ 2>&1 | grep '< HTTP'; curl -sv https://ask-error.test/ 2>&1 | grep '< HTTP'; "+curlCode+"http://denied.test/", sandbox.WithDir(work))
	if !strings.Contains(out, "502\n") || !strings.Contains(out, "< HTTP/1.1 403 not today b please") || !strings.Contains(out, "< HTTP/1.1 403 permission prompt failed") || !strings.HasSuffix(out, "403\n") {
		t.Errorf("ask callback: %q", out)
	}
	m.SyncViolations()
	seenMu.Lock()
	// One refusal per command with its own list, the unregistered one's,
	// and three here.
	if len(seen) != m.Violations().Total() || len(seen) != n+4 || seen[len(seen)-1] != "deny network-outbound denied.test:80 (host is on the deny list)" {
		t.Errorf("OnViolation saw %d (%q), the store counts %d", len(seen), seen, m.Violations().Total())
	}
	seenMu.Unlock()
	askMu.Lock()
	if strings.Contains(strings.Join(asked, " "), "denied.test") {
		t.Errorf("the ask callback was consulted about a denied host: %v", asked)
	}
	askMu.Unlock()

	// A config update while a command runs: its next connection sees it.
	cmd, err := m.Command(context.Background(), curlCode+`http://other.test/; : >first; while [ ! -e go ]; do sleep 0.05; done; `+curlCode+`http://other.test/`, sandbox.WithDir(work))
	if err != nil {
		t.Fatal(err)
	}
	var live strings.Builder
	cmd.Stdout = &live
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first request is answered before the update (a fixed sleep was
	// too short for a slow start of the proxies, under -race say).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(work, "first")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command's first request did not end within 60 s")
		}
	}
	if err := m.UpdateConfig(parse(t, `{"network":{"allowedDomains":["other.test"],"deniedDomains":["denied.test"]},"filesystem":{"denyRead":[],"allowWrite":["`+work+`"],"denyWrite":[]}}`)); err != nil {
		t.Fatal(err)
	}
	// UpdateConfig returns once the lists are in force: no wait.
	os.WriteFile(filepath.Join(work, "go"), nil, 0o644)
	cmd.Wait()
	cmd.Release()
	if live.String() != "403\n502\n" {
		t.Errorf("config update mid-run: %q", live.String())
	}

	// Shutdown leaves nothing: no process of ours (not even a zombie),
	// no placeholder, no journal.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if procs := proctab.Children(os.Getpid()); len(procs) > 0 {
		t.Errorf("processes left after Close: %v", procs)
	}
	for _, p := range []string{".bashrc", ".gitconfig", ".mcp.json", ".vscode"} {
		if _, err := os.Lstat(filepath.Join(work, p)); err == nil {
			t.Errorf("placeholder %s left after Close", p)
		}
	}
	if j, _ := filepath.Glob(filepath.Join(os.TempDir(), "srt-"+strconv.Itoa(os.Getuid()), "run-"+strconv.Itoa(os.Getpid())+"-*")); len(j) > 0 {
		t.Errorf("journals left after Close: %v", j)
	}
	if after := mounts(t); after != mountsBefore {
		t.Errorf("the host's mount table changed:\nbefore:\n%s\nafter:\n%s", mountsBefore, after)
	}
	if _, err := m.Command(context.Background(), "true"); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Command after Close: %v, want ErrClosed", err)
	}
}

// mounts is this process's mount table, without the mount ids (which a
// remount would change without changing what is mounted where) and
// without the named network namespaces other packages' tests make.
func mounts(t *testing.T) string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		// Named network namespaces (/run/netns, `ip netns`) are what
		// srt-proxy's deployment tests make while this package's tests
		// run beside them; srt's own namespaces have no name.
		if len(f) > 4 && (f[4] == "/run/netns" || strings.HasPrefix(f[4], "/run/netns/")) {
			continue
		}
		if len(f) > 4 {
			b.WriteString(strings.Join(f[4:], " ") + "\n")
		}
	}
	return b.String()
}

// TestAgentHostAsUnprivilegedUser runs TestAgentHost again as the
// unprivileged test user (real users are not root).
func TestAgentHostAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestAgentHost", "sandbox.test")
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// upstream is unused by the scenario above but shows how a test host would
// serve on loopback.
var _ = net.Listen
var _ = http.ListenAndServe
