//go:build linux

package e2e

import (
	"bufio"
	"github.com/srt-sandbox/srt/internal/version"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSrtProxySubcommand: `srt proxy …` is srt-proxy, with the caller's
// descriptors; srt's --version wins, as in the reference.
func TestSrtProxySubcommand(t *testing.T) {
	srt := filepath.Join(bin, "srt")
	out, err := exec.Command(srt, "proxy", "--listen", "127.0.0.1:0", "--version").Output()
	if err != nil || string(out) != version.Version+"\n" {
		t.Fatalf("srt proxy --version: %q %v", out, err)
	}
	// Usage errors go to stderr only, as srt's own do.
	for _, c := range []struct{ arg, msg string }{
		{"--bogus", "error: unknown option '--bogus'"},
		{"--listen", "error: option '--listen <host:port>' argument missing"},
	} {
		usage := exec.Command(srt, "proxy", c.arg)
		var stdout, stderr strings.Builder
		usage.Stdout, usage.Stderr = &stdout, &stderr
		usage.Run()
		if code := usage.ProcessState.ExitCode(); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), c.msg) {
			t.Fatalf("srt proxy %s: exit %d, stdout %q, stderr %q", c.arg, code, stdout.String(), stderr.String())
		}
	}

	// A real run: the decider's socket as descriptor 3, a request through
	// the proxy, SIGTERM.
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "decider"), os.NewFile(uintptr(fds[1]), "proxy")
	defer ours.Close()
	cmd := exec.Command(srt, "proxy", "--listen", "127.0.0.1:0", "--decider-fd", "3")
	cmd.ExtraFiles = []*os.File{theirs}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	defer cmd.Process.Kill()
	lines := bufio.NewReader(stderr)
	dec := bufio.NewReader(ours)
	ours.SetDeadline(time.Now().Add(10 * time.Second))
	if hello, _ := dec.ReadString('\n'); hello != `{"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}`+"\n" { // line framing offers srt.v1 and srt.mask.v1
		t.Fatalf("proxy hello %q", hello)
	}
	io.WriteString(ours, `{"t":"hello","proto":1,"allowedDomains":["allowed.test"],"deniedDomains":[]}`+"\n")
	serving, _ := lines.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(serving), "srt proxy: serving ")
	if !ok {
		t.Fatalf("stderr %q", serving)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n")
	status, _ := bufio.NewReader(c).ReadString('\n')
	if status != "HTTP/1.1 403 Forbidden\r\n" {
		t.Fatalf("a host off the hello's list: %q", status)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(lines)
	cmd.Wait()
	if got := strings.TrimSpace(string(rest)); got != "srt proxy: stopped (SIGTERM)" || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("after SIGTERM: exit %d, %q", cmd.ProcessState.ExitCode(), got)
	}
}
