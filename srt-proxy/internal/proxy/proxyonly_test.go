package proxy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/decide"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

func TestAsciiAuthority(t *testing.T) {
	for target, want := range map[string]bool{
		"http://a.test/x":          true,
		"HTTPS://A.Test:8443?q":    true,
		"http://a.test.":           true,
		"http://127.0.0.1:80/":     true,
		"http://[::1]:80/":         true,
		"http://127.1/":            true, // labels of digits: ASCII, read as an address later
		"http://a_b.test/":         false,
		"http://a..test/":          false,
		"http://u@a.test/":         false,
		"http://a.test:/":          false,
		"http://a.test:80x/":       false,
		"http://[a.test]/":         false,
		"http://[fe80::1%25e]/":    false,
		"http:///x":                false,
		"ftp://a.test/":            false,
		"/x":                       false,
		"http://a.test#f":          false,
		"http://xn--bcher-kva.ch/": true,
	} {
		if got := asciiAuthority(target); got != want {
			t.Errorf("asciiAuthority(%q) = %v", target, got)
		}
	}
}

func TestTargetAsSpelled(t *testing.T) {
	for target, want := range map[string]string{
		"http://a.test":               "/",
		"http://a.test?q":             "/?q",
		"http://a.test/a/../b%2f?x=1": "/a/../b%2f?x=1",
		"http://a.test/?":             "/?",
		"http://a.test//x":            "",
		`http://a.test/\x`:            "",
		`http://a.test/a\x`:           `/a\x`,
		"http://a.test/#f":            "",
		"http://a.test/a\x7f":         "",
	} {
		got, ok := targetAsSpelled(target)
		if ok != (want != "") || got != want {
			t.Errorf("targetAsSpelled(%q) = %q, %v", target, got, ok)
		}
	}
}

func TestHostMismatch(t *testing.T) {
	tests := []struct {
		hosts     []string
		host      string
		port, def int
		want      string
	}{
		{nil, "a.test", 80, 80, ""},
		{[]string{"a.test"}, "a.test", 80, 80, ""},
		{[]string{"A.TEST"}, "a.test", 80, 80, ""},
		{[]string{"a.test:80"}, "a.test", 80, 80, ""},
		{[]string{"a.test"}, "a.test", 8080, 80, refusal.WhyHostMismatch},
		{[]string{"a.test:8080"}, "a.test", 8080, 80, ""},
		{[]string{"a.test:08080"}, "a.test", 8080, 80, refusal.WhyHostMismatch},
		{[]string{"a.test."}, "a.test", 80, 80, refusal.WhyHostMismatch},
		{[]string{"a.test:"}, "a.test", 80, 80, refusal.WhyHostMismatch},
		{[]string{""}, "a.test", 80, 80, refusal.WhyHostMismatch},
		{[]string{"[::1]:80"}, "::1", 80, 80, ""},
		{[]string{"::1"}, "::1", 80, 80, refusal.WhyHostMismatch},
		{[]string{"[a.test]"}, "a.test", 80, 80, refusal.WhyHostMismatch},
		{[]string{"a.test", "a.test"}, "a.test", 80, 80, refusal.WhyTwoHosts},
	}
	for _, tt := range tests {
		if got := hostMismatch(tt.hosts, tt.host, tt.port, tt.def); got != tt.want {
			t.Errorf("hostMismatch(%q, %s:%d) = %q, want %q", tt.hosts, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestAsciiConnectTarget(t *testing.T) {
	for target, want := range map[string]bool{
		"a.test:443": true, "[::1]:443": true, "1.2.3.4:1": true, "a.test": false,
		"a.test:": false, ":443": false, "a b:443": false, "[a]:443": false, "a.test:44x": false,
	} {
		if got := asciiConnectTarget(target); got != want {
			t.Errorf("asciiConnectTarget(%q) = %v", target, got)
		}
	}
}

// proxyOnlyFuzzAsker reads bodies as a decider asking for them would.
type proxyOnlyFuzzAsker struct{}

func (proxyOnlyFuzzAsker) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	switch {
	case strings.Contains(r.Path, "body") && r.Body != nil:
		if r.Body.Hidden() {
			if b, _, _ := r.Body.Read(1); len(b) > 0 {
				return ask.Verdict{}, ask.ErrBodylessBody
			}
		} else if _, _, err := r.Body.Read(r.Body.Reserve(8)); err != nil {
			return ask.Verdict{}, errors.New("reading: " + err.Error())
		}
	case strings.Contains(r.Host, "fail"):
		return ask.Verdict{}, errors.New("decider closed the stream")
	case strings.Contains(r.Path, "deny"):
		return ask.Verdict{Status: 418, Reason: "no"}, nil
	case strings.Contains(r.Path, "set"):
		return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1"}}}, nil
	}
	return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-gone": nil}, RemoveHeaders: []string{"x-remove"}}, nil
}

func (proxyOnlyFuzzAsker) Refused(*ask.Request, string) {}

func proxyOnlyFuzzServer() *Server {
	s := fuzzServer()
	s.Token = ""
	s.Asker = proxyOnlyFuzzAsker{}
	s.Mode = refusal.ProxyOnlyMode{}
	s.MaxHeadBytes = ProxyOnlyHeadLimit
	gate, err := decide.NewHostGate([]string{"a.test", "*.a.test", "loop.test", "down.test", "fail.test", "::1", "192.0.2.1"}, []string{"deny.a.test"})
	if err != nil {
		panic(err)
	}
	s.ProxyOnly = gate
	s.Rules.StripResponseHeaders = []string{"x-hop"}
	return s
}

func FuzzProxyOnlyConn(f *testing.F) {
	for _, s := range []string{
		"GET http://a.test/x?y HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://deny.a.test/ HTTP/1.1\r\nHost: deny.a.test\r\n\r\n",
		"POST http://a.test/body HTTP/1.1\r\nHost: a.test\r\nContent-Length: 12\r\nX_Remove: 1\r\n\r\nabcdefghijkl",
		"POST http://a.test/body HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3\r\nabc\r\n9\r\ndefghijkl\r\n0\r\nT: 1\r\n\r\n",
		"GET http://a.test/body HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx",
		"GET http://a.test/set HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"TRACE http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
		"HEAD http://loop.test:8080/ HTTP/1.0\r\n\r\n",
		"GET http://down.test/ HTTP/1.1\r\nHost: down.test\r\n\r\n",
		"GET http://fail.test/ HTTP/1.1\r\nHost: fail.test\r\n\r\n",
		"GET http://[::1]:80/a/../b HTTP/1.1\r\nHost: [::1]\r\nConnection: close, x\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01",
		"CONNECT b.test:443 HTTP/1.1\r\n\r\n",
		"GET /origin HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://u@a.test/#x HTTP/1.1\r\nHost: a.test\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		converse(t, proxyOnlyFuzzServer(), data)
	})
}

// FuzzProxyOnlyTarget checks the proxy-only target parsers' invariants.
func FuzzProxyOnlyTarget(f *testing.F) {
	for _, s := range []string{"http://a.test/x?y", "https://[::1]:8/", "http://u@h/", "http://h//x", "http://h/\\x", "a.test:443", "[::1]:1",
		"*", "/x", "ftp://a/", "u@h:1", "[::1]", "h"} {
		f.Add(s, "a.test:80")
	}
	f.Fuzz(func(t *testing.T, target, hostHeader string) {
		if spelled, ok := targetAsSpelled(target); ok {
			if !strings.HasPrefix(spelled, "/") || strings.HasPrefix(spelled, "//") || strings.ContainsAny(spelled, "# \x7f") {
				t.Fatalf("targetAsSpelled(%q) = %q", target, spelled)
			}
		}
		if asciiAuthority(target) {
			if tgt, err := http1.ParseAbsoluteTarget(target); err == nil {
				if c, err := hostname.Canonical(tgt.Host); err != nil || c != tgt.Host {
					t.Fatalf("%q: host %q not canonical", target, tgt.Host)
				}
				if hostMismatch([]string{http1.HostAuthority(tgt.Scheme, tgt.Host, tgt.Port)}, tgt.Host, tgt.Port, http1.DefaultPort(tgt.Scheme)) != "" {
					t.Fatalf("%q: the rebuilt Host does not match its own target", target)
				}
			}
		}
		if asciiConnectTarget(target) {
			http1.ParseConnectTarget(target)
		}
		hostMismatch([]string{hostHeader}, "a.test", 80, 80)
		// A target is refused with a reason exactly when it is not plain
		// ASCII host:port or absolute-form.
		if why := absoluteFormProblem(target); (why == "") != asciiAuthority(target) || !slices.Contains(targetReasons, why) {
			t.Fatalf("absoluteFormProblem(%q) = %q, asciiAuthority %v", target, why, asciiAuthority(target))
		}
		if why := connectTargetProblem(target); (why == "") != asciiConnectTarget(target) || !slices.Contains(targetReasons, why) {
			t.Fatalf("connectTargetProblem(%q) = %q, asciiConnectTarget %v", target, why, asciiConnectTarget(target))
		}
	})
}

// targetReasons are the reasons a target's form is refused with ("": none).
var targetReasons = []string{"", refusal.WhyNotASCII, refusal.WhyOriginForm, refusal.WhyAsteriskForm, refusal.WhyNotHTTPURL, refusal.WhyUserinfo, refusal.WhyConnectNoPort, refusal.WhyConnectUserinfo, refusal.WhyConnectForm}
