package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

func TestSOCKS5(t *testing.T) {
	echo4 := echoServer(t, "tcp", "127.0.0.1:0")
	port4 := echo4.Addr().(*net.TCPAddr).Port
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Token = testToken
		s.Dialer.Resolve = fakeResolve(map[string][]string{"echo.test": {"127.0.0.1"}})
		s.Dialer.Policy = exempt(t, fmt.Sprintf("127.0.0.1:%d", port4))
	})
	roundTrip := func(t *testing.T, dest []byte) {
		t.Helper()
		c, reply := socksConnect(t, addr, "srt.cmd", testToken, dest)
		defer c.Close()
		if want := []byte{5, 2, 1, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0}; !bytes.Equal(reply, want) {
			t.Fatalf("reply % x, want % x", reply, want)
		}
		io.WriteString(c, "ping")
		if got := readN(t, c, 4); string(got) != "ping" {
			t.Fatalf("echo %q", got)
		}
	}
	t.Run("hostname", func(t *testing.T) { roundTrip(t, socksDomain("Echo.Test.", port4)) })
	t.Run("IPv4", func(t *testing.T) { roundTrip(t, socksIP(netip.MustParseAddr("127.0.0.1"), port4)) })
	t.Run("IPv6", func(t *testing.T) {
		l, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback here: %v", err)
		}
		l.Close()
		echo6 := echoServer(t, "tcp", "[::1]:0")
		roundTrip(t, socksIP(netip.MustParseAddr("::1"), echo6.Addr().(*net.TCPAddr).Port))
	})
	asked := a.requests()
	if len(asked) < 2 || asked[0].Host != "echo.test" || asked[0].Kind != ask.KindSOCKS || asked[0].User != "srt.cmd" ||
		asked[0].Method != "CONNECT" || asked[0].Path != "*" || asked[1].Host != "127.0.0.1" {
		t.Errorf("asked %+v", asked)
	}
	if len(asked) == 3 && asked[2].Host != "::1" {
		t.Errorf("IPv6 asked as %q", asked[2].Host)
	}
}

func TestSOCKS5Refusals(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(*ask.Request) (ask.Verdict, error)
		resolve map[string][]string
		dest    []byte
		code    byte
	}{
		{"deny", denyWith("no"), nil, socksDomain("a.test", 443), 0x02},
		{"decider unavailable", func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{}, io.EOF }, nil, socksDomain("a.test", 443), 0x01},
		{"resolved to loopback", allowAll, map[string][]string{"myapp.test": {"127.0.0.1"}}, socksDomain("myapp.test", 80), 0x02},
		{"connection refused", allowAll, nil, socksIP(netip.MustParseAddr("127.0.0.1"), closedPortNum(t)), 0x05},
		{"name not resolved", allowAll, map[string][]string{}, socksDomain("nowhere.test", 443), 0x04},
		{"malformed host", allowAll, nil, socksDomain("a\r\nb", 80), 0x02},
		{"port 0", allowAll, nil, socksDomain("a.test", 0), 0x02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{answer: tt.answer}
			addr, _ := startProxy(t, a, func(s *Server) {
				s.Token = testToken
				if tt.resolve != nil {
					s.Dialer.Resolve = fakeResolve(tt.resolve)
				}
			})
			c, reply := socksConnect(t, addr, "srt", testToken, tt.dest)
			defer c.Close()
			if want := []byte{5, 2, 1, 0, 5, tt.code, 0, 1, 0, 0, 0, 0, 0, 0}; !bytes.Equal(reply, want) {
				t.Errorf("reply % x, want % x", reply, want)
			}
			if rest, _ := io.ReadAll(c); len(rest) != 0 {
				t.Errorf("then %q", rest)
			}
		})
	}
	t.Run("unsupported command", func(t *testing.T) {
		addr, _ := startProxy(t, &fakeAsker{}, nil)
		got := rawExchange(t, addr, []byte{5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80}) // BIND
		if want := []byte{5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0}; got != string(want) {
			t.Errorf("got % x", got)
		}
	})
	t.Run("unsupported address type", func(t *testing.T) {
		addr, _ := startProxy(t, &fakeAsker{}, nil)
		got := rawExchange(t, addr, []byte{5, 1, 0, 5, 1, 0, 9, 0, 0})
		if want := []byte{5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0}; got != string(want) {
			t.Errorf("got % x", got)
		}
	})
}

func closedPortNum(t testing.TB) int {
	t.Helper()
	a, err := netip.ParseAddrPort(closedPort(t))
	if err != nil {
		t.Fatal(err)
	}
	return int(a.Port())
}

func TestSOCKS5AuthFailure(t *testing.T) {
	a := &fakeAsker{}
	addr, _ := startProxy(t, a, func(s *Server) { s.Token = testToken })
	for _, tt := range []struct{ user, pass string }{{"srt", "wrong"}, {"", testToken}} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		msg := append([]byte{5, 1, 2, 1, byte(len(tt.user))}, tt.user...)
		msg = append(append(msg, byte(len(tt.pass))), tt.pass...)
		c.Write(msg)
		got, _ := io.ReadAll(c)
		if want := []byte{5, 2, 1, 1}; !bytes.Equal(got, want) {
			t.Errorf("%q/%q: got % x, want % x", tt.user, tt.pass, got, want)
		}
		c.Close()
	}
	// No acceptable method at all.
	if got := rawExchange(t, addr, []byte{5, 1, 1}); got != "\x05\xff" {
		t.Errorf("GSSAPI only: got % x", got)
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("asked %d times", n)
	}
}

func TestSOCKS5NoAuthSSH(t *testing.T) {
	a := &fakeAsker{}
	var hookCalls []string
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Token = testToken
		s.UnauthenticatedSSHReason = func(host string, port int) string {
			hookCalls = append(hookCalls, fmt.Sprintf("%s:%d", host, port))
			if host == "denied.example" {
				return "Use https remotes\x1b[31m\r\ninstead"
			}
			return ""
		}
	})
	request := func(dest []byte) string {
		return rawExchange(t, addr, append([]byte{5, 1, 0, 5, 1, 0}, dest...))
	}
	// Port 22: success, then an SSH identification and a plaintext
	// SSH_MSG_DISCONNECT (reason 1) with the default text. The packet:
	// length 140 = 1 (padding length) + 135 (payload) + 4 (padding);
	// payload = 0x01, uint32 1, uint32 122, the text, uint32 0.
	text := "This proxy requires authentication, and this client did not offer an authentication method, so the connection was refused."
	want := "\x05\x00" + "\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00" + "SSH-2.0-policy_refusal\r\n" +
		"\x00\x00\x00\x8c" + "\x04" + "\x01" + "\x00\x00\x00\x01" + "\x00\x00\x00\x7a" + text + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"
	if got := request(socksDomain("github.com", 22)); got != want {
		t.Errorf("port 22:\ngot  %q\nwant %q", got, want)
	}
	// A deny reason from the hook, control characters collapsed.
	reason := "Use https remotes [31m instead"
	payload := "\x01\x00\x00\x00\x01\x00\x00\x00" + string(rune(len(reason))) + reason + "\x00\x00\x00\x00"
	pad := 8 - (5+len(payload))%8
	if pad < 4 {
		pad += 8
	}
	want = "\x05\x00\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00SSH-2.0-policy_refusal\r\n" +
		"\x00\x00\x00" + string(rune(1+len(payload)+pad)) + string(rune(pad)) + payload + strings.Repeat("\x00", pad)
	if got := request(socksDomain("denied.example", 22)); got != want {
		t.Errorf("hook reason:\ngot  %q\nwant %q", got, want)
	}
	// Any other port: reply 0x02 and nothing else.
	if got := request(socksDomain("github.com", 443)); got != "\x05\x00\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00" {
		t.Errorf("port 443: %q", got)
	}
	if n := len(a.requests()); n != 0 {
		t.Errorf("an unauthenticated peer reached the decider %d times", n)
	}
	if fmt.Sprint(hookCalls) != "[github.com:22 denied.example:22]" {
		t.Errorf("hook calls %v", hookCalls)
	}
}

func TestSOCKS4Rejected(t *testing.T) {
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	got := rawExchange(t, addr, []byte{4, 1, 0, 80, 127, 0, 0, 1, 0})
	if got != "\x00\x5b\x00\x00\x00\x00\x00\x00" {
		t.Errorf("got % x", got)
	}
}
