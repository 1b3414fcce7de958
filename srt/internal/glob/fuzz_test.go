package glob

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/srt-sandbox/srt/internal/fsview"
)

func FuzzCompileMatch(f *testing.F) {
	for _, c := range matchCases {
		for _, s := range append(c.yes, c.no...) {
			f.Add(c.pattern, s)
		}
	}
	// The root is zero segments: no pattern but "/" matches it, though a
	// `*` may match an empty string (found by this fuzzer).
	for _, p := range []string{"/**/*", "/*", "/**", "/?*", "/**/**/*"} {
		f.Add(p, "/")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		p, err := Compile(pattern)
		valid := strings.HasPrefix(pattern, "/") && filepath.Clean(pattern) == pattern
		if err != nil {
			if valid || !errors.Is(err, ErrInvalidPattern) {
				t.Fatalf("Compile(%q): %v", pattern, err)
			}
			return
		}
		if !valid {
			t.Fatalf("Compile(%q) accepted an invalid pattern", pattern)
		}
		path = filepath.Clean("/" + path)
		m := p.Match(path)
		if re, ok := refRegexp(p); ok && utf8.ValidString(path) && re.MatchString(path) != m {
			t.Fatalf("Match(%q) on %q = %v, regexp %s disagrees", path, pattern, m, re)
		}
		if !IsPattern(pattern) {
			if !p.Match(pattern) {
				t.Fatalf("literal %q does not match itself", pattern)
			}
			if m != (path == pattern) {
				t.Fatalf("literal %q: Match(%q) = %v", pattern, path, m)
			}
		}
		prefix := p.Prefix()
		if IsPattern(prefix) || !fsview.IsWithin(pattern, prefix) {
			t.Fatalf("%q: bad prefix %q", pattern, prefix)
		}
		if m && (!fsview.IsWithin(path, prefix) || path == prefix && pattern != "/") {
			t.Fatalf("%q matches %q outside its prefix %q", pattern, path, prefix)
		}
	})
}

// fuzzTree is a small tree with awkward names, symlinks and a cycle.
var fuzzTree = map[string]string{
	"/r/a.pem":       "file",
	"/r/.env":        "file",
	"/r/d/.env":      "file",
	"/r/d/k.pem":     "file",
	"/r/d/e/f/g.pem": "file",
	"/r/d/e/h":       "dir",
	"/r/[ab]":        "file",
	"/r/list[].ts":   "file",
	"/r/a*b/c":       "file",
	"/r/q?":          "file",
	"/r/é/x":         "file",
	"/r/\xff":        "file",
	`/r/back\slash`:  "file",
	"/r/link":        "-> /r/d",
	"/r/up":          "-> ..",
	"/r/d/dangling":  "-> /nope",
	"/top":           "file",
}

func FuzzExpandAgreesWithMatch(f *testing.F) {
	for _, s := range []string{"r/**/*.pem", "r/*", "**", "r/**/.env", "r/[ab]", "r/list[].ts",
		"r/a*b/*", "r/?", "r/up/r/d/*", "r/link/*", "*/d/**", "r/[!a]*/**/?", "/"} {
		f.Add(s)
	}
	paths := treePaths(fuzzTree)
	m := fsview.NewMem(fuzzTree)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Compile(filepath.Clean("/" + s))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Expand(m, p, ExpandOptions{})
		if err != nil {
			t.Fatalf("Expand(%q): %v", p, err)
		}
		want := wantMatches(m, paths, p)
		if strings.Join(got.Matches, "\n") != strings.Join(want, "\n") || len(got.Unlistable) != 0 {
			t.Fatalf("Expand(%q):\n got  %q (unlistable %q)\n want %q", p, got.Matches, got.Unlistable, want)
		}
	})
}
