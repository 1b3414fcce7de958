//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// SRT_PROXY_REPORT_RSS_MS=N: "srt-proxy rss <bytes>" every N ms on
// stderr, the proxy's resident set as the kernel counts it.
func TestReportRSS(t *testing.T) {
	p := startNoHello(t, startOpts{framing: protocol.Line, env: []string{rssEnv + "=20"}})
	var sizes []int64
	deadline := time.Now().Add(10 * time.Second)
	for len(sizes) < 3 && time.Now().Before(deadline) {
		l := p.line()
		v, ok := strings.CutPrefix(l, "srt-proxy rss ")
		if !ok {
			t.Fatalf("stderr %q", l)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("stderr %q: %v", l, err)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) < 3 {
		t.Fatalf("%d rss lines in 10 s", len(sizes))
	}
	// The kernel's count, read from outside: within a factor of two.
	status, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	last := sizes[len(sizes)-1]
	if kb <= 0 || last < kb*1024/2 || last > kb*1024*2 {
		t.Fatalf("reported %v bytes, VmRSS %d kB", sizes, kb)
	}
}

// A value that is not a count of milliseconds is a usage error naming the
// variable, in either mode; 0 and empty report nothing.
func TestReportRSSBadValue(t *testing.T) {
	for _, v := range []string{"abc", "-5", "1.5", "20ms", "86400001", "99999999999999999999"} {
		want := rssEnv + ` needs a whole number of milliseconds from 1 to 86400000, or 0 for no report (got "` + v + `"); unset it or fix it`
		for _, c := range []struct {
			args   []string
			stderr string
		}{
			{[]string{"--listen", "127.0.0.1:0", "--decider-fd", "3"}, "srt proxy: " + want + "\n" + usageHint + "\n"},
			{[]string{"--srt-mode"}, "srt-proxy: " + want + "\n"},
		} {
			cmd := exec.Command(binary, c.args...)
			cmd.Env = append(os.Environ(), rssEnv+"="+v)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage || stderr.String() != c.stderr || stdout.Len() != 0 {
				t.Errorf("%s=%s %v: exit %d (%v), stderr %q\nwant %q", rssEnv, v, c.args, code, err, stderr.String(), c.stderr)
			}
		}
	}
	for _, v := range []string{"", "0"} {
		p := start(t, startOpts{framing: protocol.Line, env: []string{rssEnv + "=" + v}})
		select {
		case l := <-p.lines:
			t.Fatalf("%s=%q: stderr %q", rssEnv, v, l)
		case <-time.After(300 * time.Millisecond):
		}
	}
}
