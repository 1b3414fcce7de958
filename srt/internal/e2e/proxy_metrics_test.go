//go:build linux

package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSrtProxyHelp: `srt proxy --help` lists the options proxy-only mode
// takes, on stdout, and none of srt's mode, which it refuses (issue 14).
func TestSrtProxyHelp(t *testing.T) {
	cmd := exec.Command(filepath.Join(bin, "srt"), "proxy", "--help")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("srt proxy --help: %v, stderr %q", err, stderr.String())
	}
	help := stdout.String()
	for _, want := range []string{"--decider-fd <fd>", "--listen <host:port>", "--ca-fd <fd>", "--verdict-timeout <duration>", "--metrics-listen <host:port>"} {
		if !strings.Contains(help, want) {
			t.Errorf("the help lacks %q:\n%s", want, help)
		}
	}
	for _, refused := range []string{"--tls-terminate", "--max-tunnels", "--handshake-timeout", "--require-host-match", "--ambiguous-target", "(default:"} {
		if strings.Contains(help, refused) {
			t.Errorf("the help holds %q:\n%s", refused, help)
		}
	}
}

// TestSrtProxyMetrics: `srt proxy --metrics-listen` serves the metrics a
// real HTTP client scrapes after a request went through.
func TestSrtProxyMetrics(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "decider"), os.NewFile(uintptr(fds[1]), "proxy")
	defer ours.Close()
	cmd := exec.Command(filepath.Join(bin, "srt"), "proxy", "--listen", "127.0.0.1:0", "--decider-fd", "3", "--metrics-listen", "127.0.0.1:0")
	cmd.ExtraFiles = []*os.File{theirs}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ours.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := bufio.NewReader(ours).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	io.WriteString(ours, `{"t":"hello","proto":1,"allowedDomains":["allowed.test"],"deniedDomains":[]}`+"\n")
	lines := bufio.NewReader(stderr)
	serving, _ := lines.ReadString('\n')
	metrics, _ := lines.ReadString('\n')
	addr, ok1 := strings.CutPrefix(strings.TrimSpace(serving), "srt proxy: serving ")
	url, ok2 := strings.CutPrefix(strings.TrimSpace(metrics), "srt proxy: serving metrics on ")
	if !ok1 || !ok2 {
		t.Fatalf("stderr %q %q", serving, metrics)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n")
	io.ReadAll(c)
	c.Close()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `srt_proxy_decisions_total{kind="http",outcome="deny",reason="host_not_allowed"} 1` + "\n"; resp.StatusCode != 200 || !strings.Contains(string(page), want) {
		t.Errorf("scrape: %s, lacking %q:\n%s", resp.Status, want, page)
	}
}
