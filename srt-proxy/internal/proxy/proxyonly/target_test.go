package proxyonly

import (
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/hostname"

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
