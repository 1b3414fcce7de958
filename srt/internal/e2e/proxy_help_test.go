package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	for _, want := range []string{"--decider-fd <fd>", "--listen <host:port>", "--ca-fd <fd>", "--verdict-timeout <duration>"} {
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
