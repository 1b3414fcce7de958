//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/srtlink"
)

// relayOnly starts srt-proxy in srt's mode without a decider (srt does so
// when both network.httpProxyPort and socksProxyPort are set) and returns
// the control channel once it said ready.
func relayOnly(t *testing.T) (*net.UnixConn, *proc) {
	t.Helper()
	ctlMine, ctlTheirs := socketPair(t)
	p := spawn(t, []string{"--srt-mode", "--control-fd", "3"}, []*os.File{ctlTheirs}, nil)
	ctlTheirs.Close()
	return awaitReady(t, ctlMine), p
}

// awaitReady reads srt-proxy's first line on the handoff channel ctlMine,
// which must be "ready" within 10 s, and returns the channel (closed at
// the test's end).
func awaitReady(t *testing.T, ctlMine *os.File) *net.UnixConn {
	t.Helper()
	ctl, err := net.FileConn(ctlMine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	ctl.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, _ := bufio.NewReader(ctl).ReadString('\n'); line != `{"t":"ready"}`+"\n" {
		t.Fatalf("srt-proxy said %q", line)
	}
	return ctl.(*net.UnixConn)
}

// handRelay hands srt-proxy a fresh loopback listener to relay to port,
// and returns the listener's address.
func handRelay(t *testing.T, ctl *net.UnixConn, id string, r *srtlink.Relay) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, _ := l.(*net.TCPListener).File()
	if err := srtlink.Send(ctl, srtlink.Message{T: "listen", ID: id, Relay: r}, []*os.File{lf}); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	addr := l.Addr().String()
	l.Close() // srt-proxy holds its own copy
	return addr
}

// Without a decider srt-proxy relays the listeners it is handed, byte for
// byte, to localhost:PORT; when nothing listens there the connection is
// closed and one warning names the setting and the port.
func TestSRTModeRelayOnly(t *testing.T) {
	ctl, p := relayOnly(t)
	ext, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	go func() {
		for {
			c, err := ext.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	addr := handRelay(t, ctl, "s1", &srtlink.Relay{Port: ext.Addr().(*net.TCPAddr).Port, Setting: "httpProxyPort"})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n"))
	c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n" {
		t.Fatalf("relayed back %q", got)
	}

	down := freePort(t)
	addr = handRelay(t, ctl, "s1", &srtlink.Relay{Port: down, Setting: "socksProxyPort"})
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte{5, 1, 0})
		if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("read %d bytes, %v; want the end of the stream", n, err)
		}
		c.Close()
	}
	want := "srt-proxy: warning: network.socksProxyPort is " + strconv.Itoa(down) + ", but nothing on this host accepts connections on localhost:" + strconv.Itoa(down) + " ("
	if l := p.line(); !strings.HasPrefix(l, want) {
		t.Fatalf("stderr %q, want it to start %q", l, want)
	}
	// A listener to serve rather than relay cannot be: srt-proxy stops.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	lf, _ := l.(*net.TCPListener).File()
	srtlink.Send(ctl, srtlink.Message{T: "listen", ID: "s2"}, []*os.File{lf})
	lf.Close()
	l.Close()
	if code, rest := p.exit(); code != exitOK || rest != "" {
		t.Fatalf("exit %d, stderr %q (the second warning must not come)", code, rest)
	}
}

// Options of srt-proxy's own proxy need a decider: without one they would
// be dropped, so they are refused.
func TestSRTModeRelayOnlyRefusesProxyOptions(t *testing.T) {
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for args, want := range map[string]string{
		"--srt-mode --control-fd 3 --parent-http http://p.test:3128": "srt-proxy: --parent-http needs --decider-fd: without a decider srt-proxy only relays",
		"--srt-mode --control-fd 3 --tls-terminate":                  "srt-proxy: --tls-terminate needs --decider-fd: without a decider srt-proxy only relays",
		"--srt-mode --decider-fd 3":                                  "srt-proxy: --srt-mode needs --control-fd (and --decider-fd, unless it only relays)",
	} {
		p := spawn(t, strings.Fields(args), []*os.File{r}, nil)
		if code, rest := p.exit(); code != exitUsage || rest != want {
			t.Errorf("%s: exit %d, stderr %q; want %q", args, code, rest, want)
		}
	}
}
