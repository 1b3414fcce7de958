package http1

import (
	"strings"
	"testing"
)

// FuzzInnerTarget: the request-target parser of terminated tunnels and the
// normalization that decides ambiguity never panic; a parsed target keeps
// no fragment; normalizing a path twice changes nothing more, and a
// normalized path holds no dot segment and no backslash.
func FuzzInnerTarget(f *testing.F) {
	for _, s := range []string{"/", "/a/../b?x#y", "*", "https://h:1/p?q", "http://h", "/%2e%2E/%7e", `/a\..\b`, "//x/./y/", "/...", "https://u@h/"} {
		f.Add("GET", s)
	}
	f.Add("OPTIONS", "*")
	f.Fuzz(func(t *testing.T, method, target string) {
		rt, err := ParseInnerTarget(method, target)
		if err != nil {
			return
		}
		if strings.Contains(rt.Spelled(), "#") || rt.Path == "" {
			t.Fatalf("%q → %+v", target, rt)
		}
		if rt.Path != "*" && !strings.HasPrefix(rt.Path, "/") {
			t.Fatalf("%q: path %q", target, rt.Path)
		}
		n := NormalizePath(rt.Path)
		if again := NormalizePath(n); again != n {
			t.Fatalf("%q: %q normalizes to %q, then to %q", target, rt.Path, n, again)
		}
		if rt.Path == "*" {
			return
		}
		if strings.Contains(n, `\`) {
			t.Fatalf("%q: backslash left in %q", rt.Path, n)
		}
		for _, seg := range strings.Split(n, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q: dot segment left in %q", rt.Path, n)
			}
		}
	})
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		"/":                 "/",
		"/a/b":              "/a/b",
		"/a/./b":            "/a/b",
		"/a/../b":           "/b",
		"/../../a":          "/a",
		"/a/%2e%2E/b":       "/b",
		"/%7Euser/%41":      "/~user/A",
		"/a%2Fb":            "/a%2Fb",
		"/a%2fb":            "/a%2fb",
		`/a\b`:              "/a/b",
		"/a/b/..":           "/a/",
		"/a/.":              "/a/",
		"/a/...":            "/a/...",
		"/a/%252e%252e/":    "/a/%252e%252e/",
		"//double//slash/.": "//double//slash/",
		"/%%370":            "/%2570",
		"/100%":             "/100%25",
		"/%4":               "/%254",
	} {
		if got := NormalizePath(in); got != want {
			t.Errorf("normalizePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseInnerTarget(t *testing.T) {
	for _, tc := range []struct {
		method, target, spelled, path, query string
		bad                                  bool
	}{
		{"GET", "/p?q=1#f", "/p?q=1", "/p", "q=1", false},
		{"GET", "/p?", "/p?", "/p", "", false},
		{"GET", "https://H:8443/p?q", "https://H:8443/p?q", "/p", "q", false},
		{"GET", "https://h?q", "https://h/?q", "/", "q", false},
		{"OPTIONS", "*", "*", "*", "", false},
		{"GET", "*", "", "", "", true},
		{"GET", "h:443", "", "", "", true},
		{"GET", "ftp://h/", "", "", "", true},
		{"GET", "https://user@h/", "", "", "", true},
		{"GET", "https:///p", "", "", "", true},
	} {
		rt, err := ParseInnerTarget(tc.method, tc.target)
		if tc.bad {
			if err == nil {
				t.Errorf("%s %q: accepted", tc.method, tc.target)
			}
			continue
		}
		if err != nil || rt.Spelled() != tc.spelled || rt.Path != tc.path || rt.Query != tc.query {
			t.Errorf("%s %q: %+v %v", tc.method, tc.target, rt, err)
		}
	}
}
