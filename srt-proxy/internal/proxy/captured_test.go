package proxy

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/captured"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// capturedConn connects to a loopback listener whose one connection s serves
// as a captured connection to d, and returns the client's end.
func capturedConn(t *testing.T, s *Server, d captured.Destination) net.Conn {
	t.Helper()
	c, err := dialCaptured(t, s, d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dialCaptured is capturedConn, with the error of the dial: a reset can come
// before the connect returns.
func dialCaptured(t *testing.T, s *Server, d captured.Destination) (net.Conn, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err == nil {
			s.ServeCaptured(c, d)
		}
	}()
	t.Cleanup(func() { <-done })
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, nil
}

// expectReset fails unless the captured connection to d is reset: at the
// connect, or when it is read after write was sent.
func expectReset(t *testing.T, s *Server, d captured.Destination, write string) {
	t.Helper()
	c, err := dialCaptured(t, s, d)
	if err == nil {
		// The reset is reported once: to the write when it comes first
		// (even an empty write sees it, and the read after it then meets
		// only the end of the stream), else to the read.
		if _, err = c.Write([]byte(write)); err == nil {
			var got []byte
			got, err = io.ReadAll(c)
			if len(got) > 0 {
				t.Fatalf("read %q", got)
			}
		}
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("%v; want a reset", err)
	}
}

func newCaptureServer(t *testing.T, asker *fakeAsker, configure func(*Server)) *Server {
	t.Helper()
	s := &Server{Asker: asker, Dialer: &dial.Dialer{HostAddrs: func() []netip.Addr { return nil }}}
	if configure != nil {
		configure(s)
	}
	t.Cleanup(s.Close)
	return s
}

// A refusal without a question, a deny and a decider that cannot answer
// all reset the connection; only the last two ask, as a CONNECT.
func TestCapturedRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		d      captured.Destination
		answer func(*ask.Request) (ask.Verdict, error)
		asked  []ask.Request
	}{
		{"refused without asking", captured.Destination{User: "srt.u", Host: "198.18.200.1", Port: 80, Literal: true, Refuse: "no name"}, allowAll, nil},
		{"denied", captured.Destination{User: "srt.u", Host: "x.test", Port: 443}, denyWith("nope"),
			[]ask.Request{{Kind: ask.KindConnect, User: "srt.u", Method: "CONNECT", Host: "x.test", Port: 443, Path: "*"}}},
		{"decider unavailable", captured.Destination{User: "srt.u", Host: "192.0.2.1", Port: 22, Literal: true},
			func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{}, errors.New("decider gone") },
			[]ask.Request{{Kind: ask.KindConnect, User: "srt.u", Method: "CONNECT", Host: "192.0.2.1", Port: 22, Path: "*"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &fakeAsker{answer: c.answer}
			s := newCaptureServer(t, a, nil)
			expectReset(t, s, c.d, "hello")
			if got := a.requests(); !reflect.DeepEqual(got, c.asked) {
				t.Errorf("asked %+v, want %+v", got, c.asked)
			}
		})
	}
}

// An allowed connection is dialled and spliced; a server that speaks
// first is heard at once (nothing waits for the client's bytes).
func TestCapturedTunnel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, l, func(c net.Conn) {
		io.WriteString(c, "220 banner\r\n")
		io.Copy(c, c)
	})
	addr := l.Addr().(*net.TCPAddr)
	a := &fakeAsker{answer: allowAll}
	s := newCaptureServer(t, a, func(s *Server) {
		s.Dialer.Resolve = fakeResolve(map[string][]string{"db.test": {"127.0.0.1"}})
		s.Dialer.Policy = exempt(t, "127.0.0.1")
	})
	for _, d := range []captured.Destination{
		{User: "srt.u", Host: "127.0.0.1", Port: addr.Port, Literal: true},
		{User: "srt.u", Host: "db.test", Port: addr.Port},
	} {
		c := capturedConn(t, s, d)
		br := bufio.NewReader(c)
		if line, err := br.ReadString('\n'); line != "220 banner\r\n" {
			t.Fatalf("%s: first line %q, %v", d.Host, line, err)
		}
		c.Write([]byte("ping\n"))
		if line, _ := br.ReadString('\n'); line != "ping\n" {
			t.Fatalf("%s: echo %q", d.Host, line)
		}
	}
}

// After an allow, the resolved-address check and an unreachable upstream
// reset the connection and are told to the decider; so does
// refuseOpaqueTunnels. The decision line says deny for what policy
// refused (the address check, refuseOpaqueTunnels), as it does for a
// CONNECT, and fail for an upstream that cannot be reached.
func TestCapturedRefusedAfterAllow(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	for _, c := range []struct {
		name      string
		configure func(*Server)
		d         captured.Destination
		refused   string
		decision  string
	}{
		{"resolved to loopback", func(s *Server) {
			s.Dialer.Resolve = fakeResolve(map[string][]string{"evil.test": {"127.0.0.1"}})
		}, captured.Destination{Host: "evil.test", Port: 80}, "evil.test resolved to a loopback address", `"decision":"deny"`},
		{"unreachable", nil, captured.Destination{Host: "127.0.0.1", Port: closedPort, Literal: true}, "127.0.0.1 upstream unreachable: ", `"decision":"fail"`},
		{"refuseOpaqueTunnels", func(s *Server) { s.Rules.RefuseOpaqueTunnels = true },
			captured.Destination{Host: "x.test", Port: 5432}, "x.test " + refusal.WhyOpaqueTunnel, `"decision":"deny"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &fakeAsker{answer: allowAll}
			var log logBuffer
			s := newCaptureServer(t, a, func(s *Server) {
				s.Logger = zerolog.New(&log)
				if c.configure != nil {
					c.configure(s)
				}
			})
			expectReset(t, s, c.d, "")
			if got := a.refusals(); len(got) != 1 || !strings.HasPrefix(got[0], c.refused) {
				t.Errorf("told the decider %q, want %q", got, c.refused)
			}
			// The line is written just after the reset.
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), `"kind":"capture"`); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no decision line")
				}
			}
			if line := log.String(); !strings.Contains(line, c.decision) {
				t.Errorf("decision line %s, want %s", line, c.decision)
			}
		})
	}
}

// With TLS termination a captured connection is terminated as a CONNECT
// is; to an IP address, the ClientHello's server name is the host asked
// about and dialled.
func TestCapturedTerminated(t *testing.T) {
	f := newTLSFixture(t, fixtureOpts{})
	for _, c := range []struct {
		name string
		d    captured.Destination
		sni  string
		host string // asked about
	}{
		{"a name", captured.Destination{User: "srt.u", Host: "echo.test", Port: f.port}, "echo.test", "echo.test"},
		{"an address with a server name", captured.Destination{User: "srt.u", Host: "192.0.2.9", Port: f.port, Literal: true}, "echo.test", "echo.test"},
		{"a name whose server name differs", captured.Destination{User: "srt.u", Host: "other.test", Port: f.port}, "echo.test", "other.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.asker.requests())
			conn := capturedConn(t, f.srv, c.d)
			tc := tls.Client(conn, &tls.Config{ServerName: c.sni, RootCAs: f.pool})
			resp, body := do(t, tc, bufio.NewReader(tc), "GET /in HTTP/1.1\r\nHost: "+f.target(c.sni)+"\r\nConnection: close\r\n\r\n")
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "GET /in host="+f.target(c.sni)) {
				t.Fatalf("answer %d %q", resp.StatusCode, body)
			}
			asked := f.asker.requests()[before:]
			if len(asked) != 2 || asked[0].Kind != ask.KindConnect || asked[0].Host != c.host || asked[1].Kind != ask.KindHTTP || asked[1].Host != c.host || asked[1].SNI != c.sni {
				t.Errorf("asked %+v", asked)
			}
		})
	}
	t.Run("an address without a server name is asked as the address", func(t *testing.T) {
		before := len(f.asker.requests())
		f.asker.mu.Lock()
		f.asker.answer = denyWith("no")
		f.asker.mu.Unlock()
		defer func() { f.asker.mu.Lock(); f.asker.answer = nil; f.asker.mu.Unlock() }()
		conn := capturedConn(t, f.srv, captured.Destination{User: "srt.u", Host: "192.0.2.9", Port: f.port, Literal: true})
		tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true}) // no ServerName: no SNI
		if err := tc.Handshake(); err == nil {
			t.Fatal("the handshake succeeded")
		}
		if asked := f.asker.requests()[before:]; len(asked) != 1 || asked[0].Host != "192.0.2.9" {
			t.Errorf("asked %+v", asked)
		}
	})
}
