package proxy

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// TestRulesPlainHTTP: srt's mode applies requireHostMatch,
// ambiguousRequestTarget (when the settings name it),
// stripResponseHeaders and allowPlaintextHeaderSet to plain-HTTP
// requests, with the answers of a terminated tunnel.
func TestRulesPlainHTTP(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Secret", "s3")
		w.Header().Set("X-Kept", "yes")
		fmt.Fprintf(w, "path=%s set=%s", r.URL.EscapedPath(), r.Header.Get("X-Set"))
	})
	host := strings.TrimPrefix(up.URL, "http://")
	setter := func(*ask.Request) (ask.Verdict, error) {
		return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1"}}}, nil
	}
	tests := []struct {
		name   string
		rules  rules.Rules
		answer func(*ask.Request) (ask.Verdict, error)
		req    string
		want   []string // fragments of the answer; "!x" must be absent
		asked  bool
	}{{
		name: "host matches", rules: rules.Rules{RequireHostMatch: true},
		req: "GET " + up.URL + "/a HTTP/1.1\r\nHost: " + host + "\r\n", want: []string{"200 OK", "path=/a"}, asked: true,
	}, {
		name: "host mismatch", rules: rules.Rules{RequireHostMatch: true},
		req:  "GET " + up.URL + "/a HTTP/1.1\r\nHost: other.test\r\n",
		want: []string{"HTTP/1.1 421 Misdirected Request\r\n", "X-Proxy-Error: misdirected-request\r\n", "\r\n\r\nHost header does not match the request target\n"},
	}, {
		name: "no host header", rules: rules.Rules{RequireHostMatch: true},
		req: "GET " + up.URL + "/a HTTP/1.0\r\n", want: []string{"421 Misdirected Request"},
	}, {
		name: "two host headers", rules: rules.Rules{RequireHostMatch: true},
		req: "GET " + up.URL + "/a HTTP/1.1\r\nHost: " + host + "\r\nHost: " + host + "\r\n", want: []string{"421 Misdirected Request", "more than one Host header"},
	}, {
		name: "mismatch allowed without the rule",
		req:  "GET " + up.URL + "/a HTTP/1.1\r\nHost: other.test\r\n", want: []string{"200 OK"}, asked: true,
	}, {
		name: "ambiguous refused", rules: rules.Rules{CheckPlainTargets: true},
		req:  "GET " + up.URL + "/a/../admin HTTP/1.1\r\nHost: x\r\n",
		want: []string{"HTTP/1.1 400 Bad Request\r\n", "X-Proxy-Error: ambiguous-request-target\r\n", "\r\n\r\n" + refusal.WhyAmbiguous + "\n"},
	}, {
		name: "ambiguous unchecked by default",
		req:  "GET " + up.URL + "/a/%2e%2e/admin HTTP/1.1\r\nHost: x\r\n", want: []string{"path=/a/%2e%2e/admin"}, asked: true,
	}, {
		name: "ambiguous as spelled", rules: rules.Rules{CheckPlainTargets: true, AmbiguousTarget: rules.TargetAsSpelled},
		req: "GET " + up.URL + "/a/%2e%2e/admin HTTP/1.1\r\nHost: x\r\n", want: []string{"path=/a/%2e%2e/admin"}, asked: true,
	}, {
		name: "ambiguous normalized", rules: rules.Rules{CheckPlainTargets: true, AmbiguousTarget: rules.TargetNormalize},
		req: "GET " + up.URL + "/a/%2e%2e/admin HTTP/1.1\r\nHost: x\r\n", want: []string{"path=/admin"}, asked: true,
	}, {
		name: "strip response headers", rules: rules.Rules{StripResponseHeaders: []string{"x_SECRET"}},
		req: "GET " + up.URL + "/a HTTP/1.1\r\nHost: x\r\n", want: []string{"X-Kept: yes", "!X-Secret"}, asked: true,
	}, {
		name: "header set refused on cleartext", answer: setter,
		req:  "GET " + up.URL + "/a HTTP/1.1\r\nHost: x\r\n",
		want: []string{"HTTP/1.1 403 Forbidden\r\n", "X-Proxy-Error: blocked-by-sandbox-runtime\r\n", refusal.WhyPlaintextHeaderSet + "\n"}, asked: true,
	}, {
		name: "header set allowed", rules: rules.Rules{PlaintextHeaderSet: true}, answer: setter,
		req: "GET " + up.URL + "/a HTTP/1.1\r\nHost: x\r\n", want: []string{"200 OK", "set=1"}, asked: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeAsker{answer: tt.answer}
			addr, _ := startProxy(t, a, func(s *Server) { s.Rules = tt.rules })
			got := rawExchange(t, addr, []byte(tt.req+"Connection: close\r\n\r\n"))
			for _, w := range tt.want {
				if neg, ok := strings.CutPrefix(w, "!"); ok {
					if strings.Contains(got, neg) {
						t.Errorf("answer holds %q:\n%s", neg, got)
					}
				} else if !strings.Contains(got, w) {
					t.Errorf("answer lacks %q:\n%s", w, got)
				}
			}
			if asked := len(a.requests()) > 0; asked != tt.asked {
				t.Errorf("decider asked: %v, want %v", asked, tt.asked)
			}
		})
	}
	// The refusal after an allow is told to the decider.
	a := &fakeAsker{answer: setter}
	addr, _ := startProxy(t, a, nil)
	rawExchange(t, addr, []byte("GET "+up.URL+"/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
	if r := a.refusals(); len(r) != 1 || !strings.HasSuffix(r[0], refusal.WhyPlaintextHeaderSet) {
		t.Errorf("refusals told: %q", r)
	}
}

// TestRulesOpaqueTunnels: with refuseOpaqueTunnels and no termination, an
// allowed CONNECT gets 403 and an allowed SOCKS5 CONNECT reply 0x01; both
// are told to the decider; denied ones keep their own answers.
func TestRulesOpaqueTunnels(t *testing.T) {
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	port := echo.Addr().(*net.TCPAddr).Port
	a := &fakeAsker{answer: func(r *ask.Request) (ask.Verdict, error) {
		if r.Host == "denied.test" {
			return ask.Verdict{Status: 403, Reason: "host is not on the allow list"}, nil
		}
		return ask.Verdict{Allow: true}, nil
	}}
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Rules.RefuseOpaqueTunnels = true
		s.Dialer.Policy = exempt(t, fmt.Sprintf("127.0.0.1:%d", port))
	})
	got := rawExchange(t, addr, []byte(fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n", port)))
	if want := "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\n" + refusal.WhyOpaqueTunnel; got != want {
		t.Errorf("CONNECT answer %q, want %q", got, want)
	}
	got = rawExchange(t, addr, []byte("CONNECT denied.test:443 HTTP/1.1\r\nHost: x\r\n\r\n"))
	if !strings.HasPrefix(got, "HTTP/1.1 403 host is not on the allow list\r\n") {
		t.Errorf("denied CONNECT answer %q", got)
	}
	c, reply := socksConnect(t, addr, "srt.cmd", "", socksDomain("echo.test", port))
	c.Close()
	if len(reply) < 6 || reply[5] != refusal.SOCKSGeneralFailure {
		t.Errorf("SOCKS reply % x, want code 0x01", reply)
	}
	want := []string{"127.0.0.1 " + refusal.WhyOpaqueTunnel, "echo.test " + refusal.WhySOCKSTunnel}
	if r := a.refusals(); strings.Join(r, "|") != strings.Join(want, "|") {
		t.Errorf("refusals told %q, want %q", r, want)
	}
}
