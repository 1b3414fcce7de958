//go:build linux

package main

import (
	"bufio"
	"io"
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
// for it, the link dies and srt-proxy stops.
func TestBackPressure(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 96 MiB")
	}
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	p := start(t, startOpts{args: []string{"--verdict-timeout", "1s"}})
	const max = 32 << 20
	body := strings.Repeat("x", max)
	head := "POST http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\nContent-Length: " + strconv.Itoa(max) + "\r\n\r\n"
	// The decider reads nothing from here on: it knows the ids (1, 2, 3)
	// and asks for each body once the request is sent.
	answers := make([]<-chan string, 3)
	for i := range answers {
		c := p.dial()
		answers[i] = async(func() string {
			io.WriteString(c, head)
			io.WriteString(c, body)
			return readAnswer(t, c, bufio.NewReader(c))
		})
		time.Sleep(300 * time.Millisecond)
		p.dec.send(verdict(uint64(i+1), `"action":"need_body","max":33554432`))
		if i == 1 {
			// Two bodies fill the budget; they are released when their
			// verdicts time out, and the third can be read.
			time.Sleep(1500 * time.Millisecond)
		}
	}
	code, rest := p.exit()
	if !regexp.MustCompile(`^srt proxy: stopped \(decider: not reading: \d+ bytes queued\)$`).MatchString(rest) || code != 0 {
		t.Fatalf("exit %d, stderr %q", code, rest)
	}
	n, _ := strconv.Atoi(regexp.MustCompile(`\d+`).FindString(rest))
	if n <= 123032918 {
		t.Errorf("died with %d bytes queued, not past the limit", n)
	}
	for _, ch := range answers {
		ans := await(t, ch)
		if !strings.HasPrefix(ans, "HTTP/1.1 503 Service Unavailable\r\n") && !strings.Contains(ans, "<") {
			t.Errorf("got %q", ans)
		}
	}
}
