//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A decider written in Python (testdata/decider.py, line framing) drives
// the built srt-proxy; curl is the client.
func TestPythonDeciderWithCurl(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for this test (scripts/test installs it)")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed for this test (scripts/test installs it)")
	}
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	script, _ := filepath.Abs("testdata/decider.py")
	p, dec := startPythonDecider(t, python, script)

	run := func(args ...string) string {
		out, err := exec.Command(curl, append([]string{"-sS", "--max-time", "10", "-x", "http://" + p.addr}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := run("http://" + up.addr + "/x?q=1"); got != "hello\n" {
		t.Errorf("GET: %q", got)
	}
	got := run("-i", "-d", "data", "http://"+up.addr+"/x")
	for _, want := range []string{"HTTP/1.1 403 Forbidden\r\n", "X-Deny-Reason: decider\r\n", "\r\n\r\nno POST\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("POST: %q lacks %q", got, want)
		}
	}
	got = run("-i", "http://example.com/")
	if !strings.Contains(got, "X-Deny-Reason: host_not_allowed") {
		t.Errorf("not allowed: %q", got)
	}
	got = run("-i", "-X", "DELETE", "http://"+up.addr+"/x")
	if !strings.HasPrefix(got, "HTTP/1.1 405 Method Not Allowed\r\n") || !strings.HasSuffix(got, "denied by sandbox policy\n") {
		t.Errorf("DELETE: %q", got)
	}
	// The decider ends: so does srt-proxy.
	dec.Process.Kill()
	p.expectStop("decider: decider closed the stream", 0)
}

// startPythonDecider runs script (allowing 127.0.0.1) on one end of a
// socketpair and srt-proxy on the other, and waits until it serves.
func startPythonDecider(t *testing.T, python, script string) (*proc, *exec.Cmd) {
	t.Helper()
	mine, theirs := socketPair(t)
	dec := exec.Command(python, script, "127.0.0.1")
	dec.ExtraFiles = []*os.File{mine}
	dec.Stderr = os.Stderr
	if err := dec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dec.Process.Kill(); dec.Wait() })
	mine.Close()
	p := spawn(t, []string{"--listen", "127.0.0.1:0", "--decider-fd", "3"}, []*os.File{theirs}, nil)
	theirs.Close()
	p.serving()
	return p, dec
}

// TestREADMEDecider runs the decider shown in README.md, as printed there.
func TestREADMEDecider(t *testing.T) {
	python := lookPython(t)
	script := filepath.Join(t.TempDir(), "decider.py")
	os.WriteFile(script, []byte(fencedBlock(t, "README.md", "## `srt proxy`", "```python\n")), 0o644)
	p, _ := startPythonDecider(t, python, script)
	expectGetNotPost(t, p)
}

// TestDocPairLauncher runs the launcher docs/srt-proxy.md prints (pair.py)
// as a user would: it gives the Python decider and srt-proxy each one end
// of a socketpair as fd 3, requests are decided, and SIGTERM to the
// launcher stops srt-proxy, then the decider, and the launcher exits 0.
func TestDocPairLauncher(t *testing.T) {
	python := lookPython(t)
	launcher := filepath.Join(t.TempDir(), "pair.py")
	os.WriteFile(launcher, []byte("# pair.py:"+fencedBlock(t, "docs/srt-proxy.md", "", "```python\n# pair.py:")), 0o644)
	decider, _ := filepath.Abs("testdata/decider.py")
	p := &proc{t: t, lines: make(chan string, 256), done: make(chan struct{})}
	p.cmd = exec.Command(python, launcher, python, decider, "127.0.0.1", "--", binary, "--listen", "127.0.0.1:0", "--decider-fd", "3")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	startProc(t, p)
	t.Cleanup(func() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) })
	p.serving()
	expectGetNotPost(t, p)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.expectStop("SIGTERM", 0)
	// Nothing of the group is left: the decider read the end of its stream.
	if err := syscall.Kill(-p.cmd.Process.Pid, 0); err != syscall.ESRCH {
		t.Errorf("a process of the launcher's group is still there: kill(0) = %v", err)
	}
}

func lookPython(t *testing.T) string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for this test (scripts/test installs it)")
	}
	return python
}

// fencedBlock is the text of the repository's file (README.md, docs/…)
// after the first opening (a fence and what follows it) found after the
// heading, up to the closing fence.
func fencedBlock(t *testing.T, file, heading, opening string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("../../..", file))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), heading)
	if ok {
		_, rest, ok = strings.Cut(rest, opening)
	}
	code, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("%s has no block %q after %q", file, opening, heading)
	}
	return code
}

// expectGetNotPost checks a decider that lets GET through and refuses
// POST with "no POST".
func expectGetNotPost(t *testing.T, p *proc) {
	t.Helper()
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	if got := p.roundTrip("GET http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\n\r\n"); !strings.HasSuffix(got, "\r\n\r\nhello\n") {
		t.Errorf("GET: %q", got)
	}
	got := p.roundTrip("POST http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\nContent-Length: 0\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403 Forbidden\r\n") || !strings.HasSuffix(got, "\r\n\r\nno POST\n") {
		t.Errorf("POST: %q", got)
	}
}
