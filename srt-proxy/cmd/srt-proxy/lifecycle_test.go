//go:build linux

package main

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestServesOnlyAfterHello(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			port := strconv.Itoa(freePort(t))
			p := startNoHello(t, startOpts{framing: f, args: []string{"--listen", "127.0.0.1:" + port}})
			if got, want := string(p.dec.next()), proxyHello(f); got != want {
				t.Fatalf("proxy hello %q, want %q", got, want)
			}
			time.Sleep(200 * time.Millisecond)
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				t.Fatal("listening before the decider's hello")
			}
			p.dec.send(defaultHello)
			p.expectLine("srt proxy: serving 127.0.0.1:" + port)
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
	}
}

func TestListenAnyInterface(t *testing.T) {
	p := startNoHello(t, startOpts{args: []string{"--listen", "0.0.0.0:0", "--listen-any-interface"}})
	p.expectLine("srt proxy: warning: --listen-any-interface: the listener on 0.0.0.0:0 is reachable from other hosts and is unauthenticated")
	p.dec.next()
	p.dec.send(defaultHello)
	if l := p.line(); !strings.HasPrefix(l, "srt proxy: serving 0.0.0.0:") {
		t.Fatalf("stderr %q", l)
	}
}

func TestStops(t *testing.T) {
	t.Run("SIGTERM", func(t *testing.T) {
		p := start(t, startOpts{})
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.expectStop("SIGTERM", 0)
	})
	t.Run("SIGTERM before the hello", func(t *testing.T) {
		p := startNoHello(t, startOpts{})
		p.dec.next()
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.expectStop("SIGTERM", 0)
	})
	t.Run("lifeline closed", func(t *testing.T) {
		r, w, _ := os.Pipe()
		p := startWith(t, []*os.File{r}, "--lifeline-fd", "4")
		p.serving()
		r.Close()
		w.Write([]byte("data on the lifeline is ignored"))
		time.Sleep(100 * time.Millisecond)
		w.Close()
		p.expectStop("lifeline closed", 0)
	})
	t.Run("lifeline error", func(t *testing.T) {
		// The write end of a pipe cannot be read: EBADF.
		r, w, _ := os.Pipe()
		defer r.Close()
		mine, theirs := socketPair(t)
		defer mine.Close()
		p := spawn(t, []string{"--listen", "127.0.0.1:0", "--decider-fd", "3", "--lifeline-fd", "4"}, []*os.File{theirs, w}, nil)
		theirs.Close()
		w.Close()
		p.expectStop("lifeline error", 0)
	})
	t.Run("decider closes", func(t *testing.T) {
		p := start(t, startOpts{})
		p.dec.c.Close()
		p.expectStop("decider: decider closed the stream", 0)
	})
	t.Run("bad hello", func(t *testing.T) {
		p := startNoHello(t, startOpts{})
		p.dec.next()
		p.dec.send(`{"t":"hello","proto":1,"allowedDomains":["*"],"deniedDomains":[]}`)
		p.expectStop("decider: bad hello", 0)
	})
	t.Run("decider closes before its hello", func(t *testing.T) {
		p := startNoHello(t, startOpts{})
		p.dec.next()
		p.dec.c.Close()
		p.expectStop("decider: decider closed the stream", 0)
	})
	t.Run("listen-fd not a socket", func(t *testing.T) {
		r, w, _ := os.Pipe()
		defer w.Close()
		p := startWith(t, []*os.File{r}, "--listen-fd", "4")
		r.Close()
		p.expectStop("start failed: fd 4 is not a socket", 1)
	})
	t.Run("listen-fd not listening", func(t *testing.T) {
		a, _ := socketPair(t)
		p := startWith(t, []*os.File{a}, "--listen-fd", "4")
		p.expectStop("start failed: fd 4 is not a listening socket", 1)
	})
	t.Run("address in use", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		mine, theirs := socketPair(t)
		p := spawn(t, []string{"--listen", l.Addr().String(), "--decider-fd", "3"}, []*os.File{theirs}, nil)
		theirs.Close()
		d := &decider{t: t, r: protocol.NewReader(mine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(mine, protocol.Line), c: mine}
		d.next()
		d.send(defaultHello)
		p.expectStop("start failed: listen tcp4 "+l.Addr().String()+": bind: address already in use", 1)
	})
}

// startWith is start with extra files (fd 4 on) and arguments, and no
// --listen besides 127.0.0.1:0.
func startWith(t *testing.T, extra []*os.File, args ...string) *proc {
	t.Helper()
	mine, theirs := socketPair(t)
	p := spawn(t, append([]string{"--listen", "127.0.0.1:0", "--decider-fd", "3"}, args...), append([]*os.File{theirs}, extra...), nil)
	theirs.Close()
	p.dec = &decider{t: t, r: protocol.NewReader(mine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(mine, protocol.Line), c: mine}
	p.dec.next()
	p.dec.send(defaultHello)
	return p
}

func TestDeciderGarbage(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			p := start(t, startOpts{framing: f})
			pending := async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
			p.dec.nextReq()
			p.dec.sendRaw(append(frameBytes(f, "garbage"), frameBytes(f, `{"t":"verdict","id":1,"action":"allow"}`)...))
			want := refusal(503, "Service Unavailable", "decider_unavailable", "request decider: frame is not valid JSON", true)
			if got := await(t, pending); got != want {
				t.Errorf("pending request got %q\nwant %q", got, want)
			}
			p.expectStop("decider: frame is not valid JSON", 0)
		})
	}
}

// frameBytes frames a message by hand.
func frameBytes(f protocol.Framing, msg string) []byte {
	if f == protocol.Line {
		return []byte(msg + "\n")
	}
	n := len(msg)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

func TestBadVerdictStopsAndRefuses(t *testing.T) {
	p := start(t, startOpts{})
	pending := async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"allow","setHeaders":{}`))
	want := refusal(503, "Service Unavailable", "decider_unavailable", "request decider: bad verdict frame", true)
	if got := await(t, pending); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	p.expectStop("decider: bad verdict frame", 0)
}

func TestListenFDsAndPipes(t *testing.T) {
	l1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f1, _ := l1.(*net.TCPListener).File()
	f2, _ := l2.(*net.TCPListener).File()
	toProxyR, toProxyW, _ := os.Pipe()
	fromProxyR, fromProxyW, _ := os.Pipe()
	p := spawn(t, []string{"--listen-fd", "3", "--listen-fd", "4", "--decider-in", "5", "--decider-out", "6"},
		[]*os.File{f1, f2, toProxyR, fromProxyW}, nil)
	for _, f := range []*os.File{f1, f2, toProxyR, fromProxyW} {
		f.Close()
	}
	l1.Close()
	l2.Close()
	d := &decider{t: t, r: protocol.NewReader(fromProxyR, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(toProxyW, protocol.Line), c: toProxyW}
	d.next()
	d.send(defaultHello)
	p.expectLine("srt proxy: serving fd 3")
	p.expectLine("srt proxy: serving fd 4")
	for _, addr := range []string{l1.Addr().String(), l2.Addr().String()} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\n"))
		want := refusal(403, "Forbidden", "host_not_allowed", "Connection blocked by network allowlist", false)
		if got := readAnswer(t, c, bufio.NewReader(c)); got != want {
			t.Errorf("got %q", got)
		}
		c.Close()
	}
	toProxyW.Close() // the decider's output ends
	p.expectStop("decider: decider closed the stream", 0)
}

func TestSocketActivation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, _ := l.(*net.TCPListener).File()
	mine, theirs := socketPair(t)
	// LISTEN_PID must be srt-proxy's own pid: a shell sets it to its own
	// and execs srt-proxy in its place. fd 3 is the listener, 4 the decider.
	p := &proc{t: t, lines: make(chan string, 64), done: make(chan struct{})}
	p.cmd = execShell(`LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=web exec "$0" --decider-fd 4`, []*os.File{lf, theirs})
	startProc(t, p)
	lf.Close()
	theirs.Close()
	p.dec = &decider{t: t, r: protocol.NewReader(mine, protocol.Line, protocol.MaxProxyFrame), w: protocol.NewWriter(mine, protocol.Line), c: mine}
	p.dec.next()
	p.dec.send(defaultHello)
	p.expectLine("srt proxy: serving fd 3")
	p.addr = l.Addr().String()
	l.Close()
	got := async(func() string { return p.roundTrip("GET http://allowed.test/a HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"deny","status":403,"reason":"no"`))
	if want, ans := refusal(403, "Forbidden", "decider", "no", true), await(t, got); ans != want {
		t.Errorf("got %q", ans)
	}
	// Another pid in LISTEN_PID: the descriptors are not ours.
	mine2, theirs2 := socketPair(t)
	defer mine2.Close()
	q := spawn(t, []string{"--decider-fd", "3"}, []*os.File{theirs2}, []string{"LISTEN_PID=1", "LISTEN_FDS=1"})
	theirs2.Close()
	if code, rest := q.exit(); code != 2 || rest != "srt proxy: --listen-fd (or --listen for development) is required\n"+usageHint {
		t.Fatalf("exit %d, %q", code, rest)
	}
}
