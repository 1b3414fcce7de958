//go:build linux

package main

import (
	"bufio"
	bin "encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerdictTimeout(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			p := start(t, startOpts{framing: f, args: []string{"--verdict-timeout", "300ms"}})
			began := time.Now()
			got := async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
			id, _ := p.dec.nextReq()
			want := refusal(503, "Service Unavailable", "decider_unavailable", "request decider: decider timed out", true)
			if ans := await(t, got); ans != want {
				t.Fatalf("got %q", ans)
			}
			if el := time.Since(began); el < 300*time.Millisecond || el > 3*time.Second {
				t.Errorf("answered after %v", el)
			}
			// The late verdict is dropped; the link serves on.
			p.dec.send(verdict(id, `"action":"allow"`))
			got = async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
			id, _ = p.dec.nextReq()
			p.dec.send(verdict(id, `"action":"deny","status":403,"reason":"second"`))
			if ans := await(t, got); ans != refusal(403, "Forbidden", "decider", "second", true) {
				t.Fatalf("got %q", ans)
			}
		})
	}
}

func TestDefaultVerdictTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 5 s")
	}
	p := start(t, startOpts{})
	began := time.Now()
	got := async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
	p.dec.nextReq()
	if ans := await(t, got); ans != refusal(503, "Service Unavailable", "decider_unavailable", "request decider: decider timed out", true) {
		t.Fatalf("got %q", ans)
	}
	// Not a speed check: the lower bound is the timeout itself; the upper
	// one only tells 5 s from a different setting on a loaded machine.
	if el := time.Since(began); el < 5*time.Second || el > 15*time.Second {
		t.Errorf("answered after %v, want 5 s", el)
	}
}

// A decider that stops reading: once more than ⌈64 MiB·4/3⌉+32 MiB waits
// for it, the link dies and srt-proxy stops. The decider reads nothing
// once the first request is in: it knows the ids (1, 2, 3) and asks for
// each body once srt-proxy has read that request's head. Two bodies fill
// the budget; they are released when their verdicts time out (the 503s
// their clients get), and only then is the third request sent, so that
// its own verdict timeout (5 s) leaves time to read its body on a loaded
// machine.
func TestBackPressure(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 96 MiB")
	}
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	p := start(t, startOpts{args: []string{"--verdict-timeout", "5s"}})
	const max = 32 << 20
	body := strings.Repeat("x", max)
	head := "POST http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\nContent-Length: " + strconv.Itoa(max) + "\r\n\r\n"
	send := func(id uint64) <-chan string {
		c := p.dial()
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		headRead(t, p, c)
		// The request reaches the decider's queue right after its
		// head is read; the verdict must not come before it.
		time.Sleep(200 * time.Millisecond)
		p.dec.send(verdict(id, `"action":"need_body","max":33554432`))
		return async(func() string {
			io.WriteString(c, body)
			return readAnswer(t, c, bufio.NewReader(c))
		})
	}
	answers := []<-chan string{send(1), send(2)}
	first := []string{await(t, answers[0]), await(t, answers[1])}
	answers = append(answers, send(3))
	code, rest := p.exitWithin(2 * time.Minute)
	if !regexp.MustCompile(`^srt proxy: stopped \(decider: not reading: \d+ bytes queued\)$`).MatchString(rest) || code != 0 {
		t.Fatalf("exit %d, stderr %q", code, rest)
	}
	n, _ := strconv.Atoi(regexp.MustCompile(`\d+`).FindString(rest))
	if n <= 123032918 {
		t.Errorf("died with %d bytes queued, not past the limit", n)
	}
	for _, ans := range append(first, await(t, answers[2])) {
		if !strings.HasPrefix(ans, "HTTP/1.1 503 Service Unavailable\r\n") && !strings.Contains(ans, "<") {
			t.Errorf("got %q", ans)
		}
	}
}

// headRead waits (at most 20 s) until srt-proxy p has read every byte the
// TCP connection c sent: its end's receive queue, in p's
// /proc/PID/net/tcp, is empty. (p's table, not /proc/net: that is the
// network namespace of this test binary's main thread, which another
// test of the package may have left elsewhere.)
func headRead(t *testing.T, p *proc, c net.Conn) {
	t.Helper()
	local := c.LocalAddr().(*net.TCPAddr)
	ip := local.IP.To4()
	if ip == nil {
		t.Fatalf("headRead: %v is not IPv4", local)
	}
	// /proc/net/tcp writes the address as the kernel holds it (host
	// order of the 32-bit word) and the port in hex.
	want := fmt.Sprintf("%08X:%04X", bin.NativeEndian.Uint32(ip), local.Port)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		table, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/net/tcp")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(table), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && f[2] == want {
				if _, rx, _ := strings.Cut(f[4], ":"); strings.Trim(rx, "0") == "" {
					return
				}
			}
		}
	}
	t.Fatal("srt-proxy did not read the request head in 20 s")
}
