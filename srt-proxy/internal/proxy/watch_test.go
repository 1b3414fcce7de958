package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// silentUpstream accepts connections, reads one request (body included)
// from each, never answers (or, with head, answers a head and part of a
// body and stalls), and reports on the channel when the proxy closes the
// connection: the upstream leg was cut.
func silentUpstream(t *testing.T, head string) (addr string, cut <-chan struct{}) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 4)
	serveEach(t, l, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, r.Body)
		io.WriteString(c, head)
		// Nothing more is sent; a read ends when the proxy closes.
		if _, err := br.ReadByte(); err == io.EOF {
			ch <- struct{}{}
		}
	})
	return l.Addr().String(), ch
}

// logBuffer is a decision log the test can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestClientGoneCutsUpstream: a client that goes away while the proxy
// waits on an upstream that never answers (or stalls in the middle of its
// body) ends the exchange: the upstream leg is cut, and the decision log
// says why. Without the watch (a delay longer than the test) the leg stays.
func TestClientGoneCutsUpstream(t *testing.T) {
	for _, tc := range []struct {
		name, head, request, reason string
	}{
		{"no answer", "", "GET http://%s/ HTTP/1.1\r\nHost: x\r\n\r\n", "the client went away before the upstream answered"},
		{"no answer to a body", "", "POST http://%s/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "the client went away before the upstream answered"},
		{"stalled body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst", "GET http://%s/ HTTP/1.1\r\nHost: x\r\n\r\n", "the client went away before the response was complete"},
	} {
		for _, watch := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/watch=%v", tc.name, watch), func(t *testing.T) {
				up, cut := silentUpstream(t, tc.head)
				var log logBuffer
				addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) {
					s.Logger = zerolog.New(&log)
					s.clientWatchDelay = 50 * time.Millisecond
					if !watch {
						s.clientWatchDelay = time.Hour
					}
				})
				c := dialProxy(t, addr)
				fmt.Fprintf(c, tc.request, up)
				if tc.head != "" {
					if head := readResponseHead(t, bufio.NewReader(c)); !strings.HasPrefix(head, "HTTP/1.1 200") {
						t.Fatalf("head %q", head)
					}
				} else {
					time.Sleep(100 * time.Millisecond) // the request is upstream
				}
				c.Close()
				wait := 5 * time.Second
				if !watch {
					wait = 500 * time.Millisecond
				}
				select {
				case <-cut:
					if !watch {
						t.Fatal("the upstream leg was cut without the watch: this test does not test it")
					}
				case <-time.After(wait):
					if watch {
						t.Fatal("the client went away and the upstream leg stayed")
					}
					return
				}
				deadline := time.Now().Add(5 * time.Second)
				for !strings.Contains(log.String(), tc.reason) {
					if time.Now().After(deadline) {
						t.Fatalf("no %q in the decision log:\n%s", tc.reason, log.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	}
}

// TestWatchKeepsTheConnection: an upstream slower than the watch delay
// changes nothing for a client that stays: pipelined requests stay where
// they are and are answered in order, the connection carries a request
// after them, and the upstream connection is kept.
func TestWatchKeepsTheConnection(t *testing.T) {
	up, conns, _ := rawUpstream(t, func(c net.Conn, _, _ int, r *http.Request) bool {
		io.Copy(io.Discard, r.Body)
		time.Sleep(150 * time.Millisecond)
		answerMethodPath(c, r)
		return true
	})
	addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) { s.clientWatchDelay = 20 * time.Millisecond })
	c := dialProxy(t, addr)
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET http://%s/one HTTP/1.1\r\nHost: x\r\n\r\nPOST http://%s/two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", up, up)
	for _, want := range []string{"GET /one", "POST /two"} {
		if got := readBody(t, br); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	fmt.Fprintf(c, "GET http://%s/three HTTP/1.1\r\nHost: x\r\n\r\n", up)
	if got := readBody(t, br); got != "GET /three" {
		t.Fatalf("after the pipelined requests: %q", got)
	}
	if n := conns(); n != 1 {
		t.Errorf("%d upstream connections, want 1 (kept)", n)
	}
}

// TestTerminateWatchKeepsTheTunnel: the same in a TLS-terminated tunnel,
// where the watch peeks through TLS: a slow answer arrives whole and the
// tunnel carries the next request.
func TestTerminateWatchKeepsTheTunnel(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(150 * time.Millisecond)
			echoHandler(w, r)
		}),
		server: func(s *Server) { s.clientWatchDelay = 20 * time.Millisecond },
	})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	for _, path := range []string{"/one", "/two"} {
		resp, body := do(t, tc, br, "GET "+path+" HTTP/1.1\r\nHost: echo.test\r\n\r\n")
		if resp.StatusCode != 200 || !strings.HasPrefix(body, "GET "+path+" ") {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
}

// readBody reads one response and returns its status and body as
// "body" (status 200 only).
func readBody(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %q %v", resp.StatusCode, b, err)
	}
	return string(b)
}
