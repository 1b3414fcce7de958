package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for this test (scripts/test installs it)")
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## `srt proxy`")
	if ok {
		_, rest, ok = strings.Cut(rest, "```python\n")
	}
	code, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("README.md has no python block in its srt proxy section")
	}
	script := filepath.Join(t.TempDir(), "decider.py")
	os.WriteFile(script, []byte(code), 0o644)
	p, _ := startPythonDecider(t, python, script)
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	if got := p.roundTrip("GET http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\n\r\n"); !strings.HasSuffix(got, "\r\n\r\nhello\n") {
		t.Errorf("GET: %q", got)
	}
	got := p.roundTrip("POST http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\nContent-Length: 0\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403 Forbidden\r\n") || !strings.HasSuffix(got, "\r\n\r\nno POST\n") {
		t.Errorf("POST: %q", got)
	}
}
