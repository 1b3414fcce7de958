package glob

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRegex(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{"/", `^/$`},
		{"/a/b.c", `^/a/b\.c$`},
		{"/a/*.pem", `^/a/[^/]*\.pem$`},
		{"/a/**/k", `^/a(/[^/]+)*/k$`},
		{"/a/**", `^/a(/[^/]+)+$`},
		{"/a/?x", `^/a/[^/]x$`},
		{"/a/[b-d]x", `^/a/[bcd]x$`},
		{"/a/[!b]x", `^/a/[^/b]x$`},
		{"/a/[x-]y", `^/a/[x-]y$`},
		{"/a/[]-]x", `^/a/\[\]-\]x$`}, // "[]" is no set: literal
		{"/a/[\\^]x", `^/a/[\\^]x$`},
		{"/a/[^]x", `^/a/\[\^\]x$`}, // no valid set: literal
		{"/a/[[]x", `^/a/[[]x$`},
		{"/a/[!a]]x", `^/a/[^/a]\]x$`},
		{"/a/[!\\-^]x", `^/a/[^]/\\^]x$`}, // the range \-^ holds ']'
		{"/*", `^/[^/]+$`},                // a name is never empty: "/" does not match
		{"/a/[é]x", `^/a/éx$`},
		{"/a/[aé]x", `^/a/(a|é)x$`},
		{"/a/[user-id]/(x)+{1}|$", `^/a/\[user-id\]/\(x\)\+\{1\}\|\$$`},
		{"/a/b\\c", `^/a/b\\c$`},
	} {
		p, err := Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Regex(false)
		if err != nil || got != c.want {
			t.Errorf("Regex(%q) = %q, %v; want %q", c.pattern, got, err, c.want)
		}
	}
	p, _ := Compile("/a/[!é]")
	if _, err := p.Regex(false); !errors.Is(err, ErrInvalidPattern) || !strings.Contains(err.Error(), "cannot express") {
		t.Errorf("Regex of a set excluding a non-ASCII character: %v", err)
	}
	p, _ = Compile("/a/*.pem")
	if got, _ := p.Regex(true); got != `^/a/[^/]*\.pem(/.*)?$` {
		t.Errorf("Regex(subtree) = %q", got)
	}
}

// FuzzRegex checks that the regex of a pattern is a POSIX ERE (Go's
// CompilePOSIX accepts it) matching exactly the paths Match does, and with
// subtree the paths beneath them too.
func FuzzRegex(f *testing.F) {
	for _, c := range matchCases {
		for _, s := range append(c.yes, c.no...) {
			f.Add(c.pattern, s)
		}
	}
	for _, p := range []string{"/a/[]x]", "/a/[!]x]", "/a/[\\-^]", "/a/[a-\\]", "/a/[!-/]", "/a.b/(c)|d$", "/[é-ë]/x"} {
		f.Add(p, "/a/x")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		p, err := Compile(pattern)
		if err != nil || !utf8.ValidString(pattern) {
			return
		}
		re, err := p.Regex(false)
		if err != nil {
			if !errors.Is(err, ErrInvalidPattern) || !strings.Contains(err.Error(), "Seatbelt regex cannot express") {
				t.Fatalf("Regex(%q): %v", pattern, err)
			}
			return
		}
		exact, err := regexp.CompilePOSIX(re)
		if err != nil {
			t.Fatalf("Regex(%q) = %q is no POSIX ERE: %v", pattern, re, err)
		}
		sub, err := p.Regex(true)
		if err != nil {
			t.Fatalf("Regex(%q, subtree): %v", pattern, err)
		}
		subtree := regexp.MustCompilePOSIX(sub)
		path = filepath.Clean("/" + path)
		if !utf8.ValidString(path) || strings.ContainsAny(path, "\n") {
			return
		}
		if m := p.Match(path); exact.MatchString(path) != m {
			t.Fatalf("Match(%q) on %q = %v, its regex %q disagrees", path, pattern, m, re)
		}
		beneath := false
		for d := path; ; d = filepath.Dir(d) {
			beneath = beneath || p.Match(d)
			if d == "/" {
				break
			}
		}
		if subtree.MatchString(path) != beneath {
			t.Fatalf("%q beneath a match of %q = %v, its regex %q disagrees", path, pattern, beneath, sub)
		}
	})
}
