package proxy

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// The refusals of srt's mode, byte for byte, over real loopback sockets.

const allowlistHTTP = "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\nContent-Length: 40\r\nConnection: close\r\n\r\nConnection blocked by network allowlist\n"

func TestRefusalsPlainHTTP(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	echoPort := portOf(t, echo.Addr().String())
	closed := closedPort(t)
	tests := []struct {
		name    string
		answer  func(*ask.Request) (ask.Verdict, error)
		resolve map[string][]string
		target  string
		want    string
		refused []string
	}{{
		name:   "deny",
		answer: denyWith("host is not on the allow list"),
		target: "http://example.com/x",
		want:   allowlistHTTP,
	}, {
		name:   "deny with the decider's own status is still 403 in srt's mode",
		answer: func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{Status: 418, Reason: "no tea"}, nil },
		target: "http://example.com/",
		want:   allowlistHTTP,
	}, {
		name:   "decider unavailable",
		answer: func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{}, errors.New("decider timed out") },
		target: "http://example.com/",
		want:   "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 35\r\nConnection: close\r\n\r\nrequest decider: decider timed out\n",
	}, {
		name:    "resolved to loopback",
		answer:  allowAll,
		resolve: map[string][]string{"myapp.test": {"127.0.0.1"}},
		target:  "http://myapp.test:" + echoPort + "/",
		want: "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: 65\r\nConnection: close\r\n\r\n" +
			"Connection to myapp.test blocked: resolved to a loopback address\n",
		refused: []string{"myapp.test resolved to a loopback address"},
	}, {
		name:    "resolved to several classes",
		answer:  allowAll,
		resolve: map[string][]string{"multi.test": {"169.254.169.254", "::1", "127.0.0.2"}},
		target:  "http://multi.test/",
		want: "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\nContent-Length: 88\r\nConnection: close\r\n\r\n" +
			"Connection to multi.test blocked: resolved to a loopback address / a link-local address\n",
		refused: []string{"multi.test resolved to a loopback address / a link-local address"},
	}, {
		// An upstream that cannot be reached says why (issue 14: a bare
		// "Bad Gateway").
		name:    "connection refused",
		answer:  allowAll,
		target:  "http://" + closed + "/",
		want:    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nX-Proxy-Error: upstream-connection-refused\r\nContent-Length: 45\r\nConnection: close\r\n\r\nupstream " + closed + ": connection refused\n",
		refused: []string{"127.0.0.1 upstream unreachable: "},
	}, {
		name:    "name does not resolve",
		answer:  allowAll,
		resolve: map[string][]string{},
		target:  "http://nowhere.test/",
		want:    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nX-Proxy-Error: upstream-name-not-resolved\r\nContent-Length: 44\r\nConnection: close\r\n\r\nupstream nowhere.test:80: name not resolved\n",
		refused: []string{"nowhere.test upstream unreachable: nowhere.test:80: lookup nowhere.test: no such host"},
	}, {
		name:   "origin-form request-target",
		target: "/just/a/path",
		want:   "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	}, {
		name:   "malformed host",
		target: "http://exa$mple.com/",
		want:   "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{answer: tt.answer}
			addr, _ := startProxy(t, a, func(s *Server) {
				if tt.resolve != nil {
					s.Dialer.Resolve = fakeResolve(tt.resolve)
				}
			})
			req := "GET " + tt.target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
			if got := rawExchange(t, addr, []byte(req)); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			got := a.refusals()
			if len(got) != len(tt.refused) {
				t.Fatalf("Refused calls %q, want %q", got, tt.refused)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.refused[i]) {
					t.Errorf("Refused %q, want prefix %q", got[i], tt.refused[i])
				}
			}
		})
	}
}

func TestRefusalKeepsConnection(t *testing.T) {
	a := &fakeAsker{answer: denyWith("no")}
	addr, _ := startProxy(t, a, nil)
	req := "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"
	got := rawExchange(t, addr, []byte(req+req+"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"))
	keep := strings.Replace(allowlistHTTP, "Connection: close\r\n", "", 1)
	if want := keep + keep + allowlistHTTP; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestRefusalsConnect(t *testing.T) {
	closed := closedPort(t)
	tests := []struct {
		name    string
		answer  func(*ask.Request) (ask.Verdict, error)
		resolve map[string][]string
		target  string
		want    string
	}{{
		name:   "deny with the default phrase",
		answer: denyWith(""),
		target: "example.com:443",
		want:   "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist",
	}, {
		name:   "deny reason as the status phrase",
		answer: denyWith("host is not on the allow list"),
		target: "example.com:443",
		want:   "HTTP/1.1 403 host is not on the allow list\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist",
	}, {
		name:   "deniedDomainReasons text sanitised (§4.7)",
		answer: denyWith("Evil <host>\nuse good.example.org"),
		target: "evil.example.org:443",
		want:   "HTTP/1.1 403 Evil host use good.example.org\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist",
	}, {
		name:   "non-ASCII reason",
		answer: denyWith("nein – verboten ☃"),
		target: "example.com:443",
		want:   "HTTP/1.1 403 nein ? verboten ?\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist",
	}, {
		name:   "decider unavailable",
		answer: func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{}, errors.New("decider closed the stream") },
		target: "example.com:443",
		want:   "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\nrequest decider: decider closed the stream",
	}, {
		name:    "resolved to loopback",
		answer:  allowAll,
		resolve: map[string][]string{"myapp.test": {"127.0.0.1"}},
		target:  "myapp.test:8765",
		want:    "HTTP/1.1 403 resolved to a loopback address\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\nConnection to myapp.test blocked: resolved to a loopback address",
	}, {
		// The reason of an upstream failure is the status phrase and the
		// X-Proxy-Error value, as a policy refusal's (issue 14: a bare 502).
		name:   "connection refused",
		answer: allowAll,
		target: closed,
		want:   "HTTP/1.1 502 upstream connection refused\r\nContent-Type: text/plain\r\nX-Proxy-Error: upstream-connection-refused\r\n\r\nupstream " + closed + ": connection refused",
	}, {
		name:    "name does not resolve",
		answer:  allowAll,
		resolve: map[string][]string{},
		target:  "nowhere.test:443",
		want:    "HTTP/1.1 502 upstream name not resolved\r\nContent-Type: text/plain\r\nX-Proxy-Error: upstream-name-not-resolved\r\n\r\nupstream nowhere.test:443: name not resolved",
	}, {
		name:   "target without a port",
		target: "example.com",
		want:   "HTTP/1.1 400 Bad Request\r\n\r\n",
	}, {
		name:   "unbracketed IPv6 target",
		target: "::1:443",
		want:   "HTTP/1.1 400 Bad Request\r\n\r\n",
	}, {
		name:   "port out of range",
		target: "example.com:65536",
		want:   "HTTP/1.1 400 Bad Request\r\n\r\n",
	}, {
		name:   "malformed host",
		target: "exa mple.com:443",
		want:   "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", // a space splits the request line: a parse error
	}, {
		name:   "bad host characters",
		target: "exa$mple.com:443",
		want:   "HTTP/1.1 400 Bad Request\r\n\r\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{answer: tt.answer}
			addr, _ := startProxy(t, a, func(s *Server) {
				if tt.resolve != nil {
					s.Dialer.Resolve = fakeResolve(tt.resolve)
				}
			})
			req := "CONNECT " + tt.target + " HTTP/1.1\r\nHost: " + tt.target + "\r\n\r\n"
			if got := rawExchange(t, addr, []byte(req)); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	const want407HTTP = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"srt\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	const want407Connect = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"srt\"\r\n\r\n"
	for _, tt := range []struct {
		name, header string
	}{
		{"none", ""},
		{"wrong token", "Proxy-Authorization: " + basicAuth("srt", "nope") + "\r\n"},
		{"empty user", "Proxy-Authorization: " + basicAuth("", testToken) + "\r\n"},
		{"not basic", "Proxy-Authorization: Bearer " + testToken + "\r\n"},
		{"twice", "Proxy-Authorization: " + basicAuth("srt", testToken) + "\r\nProxy-Authorization: " + basicAuth("srt", testToken) + "\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{}
			addr, _ := startProxy(t, a, func(s *Server) { s.Token = testToken })
			got := rawExchange(t, addr, []byte("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n"+tt.header+"\r\n"))
			if got != want407HTTP {
				t.Errorf("HTTP: got %q\nwant %q", got, want407HTTP)
			}
			got = rawExchange(t, addr, []byte("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n"+tt.header+"\r\n"))
			if got != want407Connect {
				t.Errorf("CONNECT: got %q\nwant %q", got, want407Connect)
			}
			if n := len(a.requests()); n != 0 {
				t.Errorf("an unauthenticated client reached the decider %d times", n)
			}
		})
	}
	t.Run("accepted, user passed on", func(t *testing.T) {
		a := &fakeAsker{answer: denyWith("x")}
		addr, _ := startProxy(t, a, func(s *Server) { s.Token = testToken })
		rawExchange(t, addr, []byte("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\nProxy-Authorization: basic  "+
			strings.TrimPrefix(basicAuth("srt.Y21k", testToken), "Basic ")+"\r\n\r\n"))
		reqs := a.requests()
		if len(reqs) != 1 || reqs[0].User != "srt.Y21k" {
			t.Fatalf("asked %+v", reqs)
		}
		if _, ok := reqs[0].Headers["proxy-authorization"]; ok {
			t.Error("the consumed Proxy-Authorization was shown to the decider")
		}
	})
}

func TestParseErrors(t *testing.T) {
	const bad = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	const big = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	tests := []struct{ name, req, want string }{
		{"garbage", "GARBAGE\r\n\r\n", bad},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", bad},
		{"obs-fold", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: a\r\n b\r\n\r\n", bad},
		{"space before colon", "GET http://a.test/ HTTP/1.1\r\nHost : a.test\r\n\r\n", bad},
		{"bare CR", "GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", bad},
		{"TE and CL", "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", bad},
		{"TE gzip", "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip\r\n\r\n", bad},
		{"two lengths", "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", bad},
		{"negative length", "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: -1\r\n\r\n", bad},
		{"HTTP/1.2", "GET http://a.test/ HTTP/1.2\r\n\r\n", bad},
		{"header overflow", "GET http://a.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", big},
		{"too many fields", "GET http://a.test/ HTTP/1.1\r\n" + strings.Repeat("X: a\r\n", 600) + "\r\n", big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{}
			addr, _ := startProxy(t, a, nil)
			if got := rawExchange(t, addr, []byte(tt.req)); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
			if n := len(a.requests()); n != 0 {
				t.Errorf("asked %d times", n)
			}
		})
	}
}

func TestUnaskable(t *testing.T) {
	long := strings.Repeat("a", 9<<10)
	tests := []struct{ name, req, why string }{
		{"two Host headers", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n", refusal.WhyTwoHosts},
		{"long path", "GET http://a.test/" + long + " HTTP/1.1\r\nHost: a.test\r\n", http1.WhyTargetTooLarge},
		{"long Host header", "GET http://a.test/ HTTP/1.1\r\nHost: " + long + "\r\n", http1.WhyTargetTooLarge},
		{"191 header values", "GET http://a.test/ HTTP/1.1\r\n" + strings.Repeat("X: a\r\n", 191), http1.WhyHeadersTooLarge},
		{"control character", "GET http://a.test/ HTTP/1.1\r\nX: a\x01b\r\n", http1.WhyBadHeader},
		{"C1 control", "GET http://a.test/ HTTP/1.1\r\nX: a\xc2\x85b\r\n", http1.WhyBadHeader},
		{"invalid UTF-8", "GET http://a.test/ HTTP/1.1\r\nX: a\xffb\r\n", http1.WhyBadHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{}
			addr, _ := startProxy(t, a, nil)
			got := rawExchange(t, addr, []byte(tt.req+"Connection: close\r\n\r\n"))
			body := tt.why + "\n"
			want := "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body
			if got != want {
				t.Errorf("got %q\nwant %q", got, want)
			}
			if n := len(a.requests()); n != 0 {
				t.Errorf("asked %d times", n)
			}
		})
	}
}

// TestStrictHeads: srt's mode, too, refuses the heads the reference's
// parser refuses, before asking anyone (issue 14: they were forwarded).
func TestStrictHeads(t *testing.T) {
	for name, head := range map[string]string{
		"bare LF line endings":         "GET http://a.test/ HTTP/1.1\nHost: a.test\n\n",
		"one bare LF":                  "GET http://a.test/ HTTP/1.1\r\nHost: a.test\nX: y\r\n\r\n",
		"a bare LF before the request": "\nGET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"two identical Content-Length": "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"two different Content-Length": "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy",
		"a Content-Length list":        "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1, 1\r\n\r\nx",
	} {
		t.Run(name, func(t *testing.T) {
			a := &fakeAsker{}
			addr, _ := startProxy(t, a, nil)
			if got, want := rawExchange(t, addr, []byte(head)), "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"; got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			if asked := a.requests(); len(asked) != 0 {
				t.Errorf("the decider was asked about %+v", asked)
			}
		})
	}
}
