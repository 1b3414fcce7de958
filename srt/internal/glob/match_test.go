package glob

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// matchCases pair a pattern with paths it must and must not match.
var matchCases = []struct {
	name    string
	pattern string
	yes, no []string
}{
	{name: "pem at any depth", pattern: "/home/u/proj/**/*.pem",
		yes: []string{"/home/u/proj/a.pem", "/home/u/proj/x/a.pem", "/home/u/proj/x/y/z/a.pem", "/home/u/proj/.pem", "/home/u/proj/x/.key.pem"},
		no:  []string{"/home/u/proj", "/home/u/a.pem", "/home/u/proj/a.pem/x", "/home/u/proj/a.PEM", "/home/u/projx/a.pem", "/home/u/proj/a.pemx"}},
	{name: "env in cwd only", pattern: "/w/.env",
		yes: []string{"/w/.env"},
		no:  []string{"/w/x/.env", "/w/.envrc", "/w"}},
	{name: "env at any depth", pattern: "/w/**/.env",
		yes: []string{"/w/.env", "/w/x/.env", "/w/x/y/.env"},
		no:  []string{"/w/x/.envrc", "/w", "/.env"}},
	{name: "reversed range is literal", pattern: "/w/[user-id]",
		yes: []string{"/w/[user-id]"},
		no:  []string{"/w/u", "/w/r", "/w/-", "/w/[user-id]x"}},
	{name: "empty brackets are literal", pattern: "/w/list[].ts",
		yes: []string{"/w/list[].ts"},
		no:  []string{"/w/list.ts", "/w/list[]xts"}},
	{name: "empty negated set is literal", pattern: "/w/[!]",
		yes: []string{"/w/[!]"},
		no:  []string{"/w/a", "/w/!"}},
	{name: "set closes at first bracket", pattern: "/w/[]]",
		yes: []string{"/w/[]]"},
		no:  []string{"/w/]"}},
	{name: "unterminated bracket is literal", pattern: "/w/a[bc",
		yes: []string{"/w/a[bc"},
		no:  []string{"/w/ab"}},
	{name: "star stays in its segment", pattern: "/w/*",
		yes: []string{"/w/a", "/w/.git", "/w/a.b.c", "/w/*"},
		no:  []string{"/w", "/w/a/b", "/x/a"}},
	{name: "star in the middle", pattern: "/w/a*/c",
		yes: []string{"/w/a/c", "/w/abc/c"},
		no:  []string{"/w/a/b/c", "/w/ba/c"}},
	{name: "trailing doublestar is beneath only", pattern: "/w/a/**",
		yes: []string{"/w/a/x", "/w/a/x/y/z", "/w/a/.hidden"},
		no:  []string{"/w/a", "/w", "/w/ab", "/w/ab/x"}},
	{name: "plain directory", pattern: "/w/a",
		yes: []string{"/w/a"},
		no:  []string{"/w/a/x", "/w", "/w/ab"}},
	{name: "doublestar between", pattern: "/w/a/**/b",
		yes: []string{"/w/a/b", "/w/a/x/b", "/w/a/x/y/b", "/w/a/b/b"},
		no:  []string{"/w/a/xb", "/w/a", "/w/a/b/c"}},
	{name: "repeated doublestar collapses", pattern: "/w/**/**/b",
		yes: []string{"/w/b", "/w/x/b", "/w/x/y/b"},
		no:  []string{"/w", "/w/bb"}},
	{name: "three stars are a doublestar", pattern: "/w/***/b",
		yes: []string{"/w/b", "/w/x/y/b"},
		no:  []string{"/w/xb"}},
	{name: "stars within a segment are one star", pattern: "/w/a**b",
		yes: []string{"/w/ab", "/w/axyb"},
		no:  []string{"/w/a/b", "/w/a/x/b"}},
	{name: "question mark", pattern: "/w/?.txt",
		yes: []string{"/w/a.txt", "/w/é.txt", "/w/\xff.txt", "/w/?.txt"},
		no:  []string{"/w/.txt", "/w/ab.txt", "/w/é\xff.txt"}},
	{name: "set", pattern: "/w/[abc].go",
		yes: []string{"/w/a.go", "/w/c.go"},
		no:  []string{"/w/d.go", "/w/[abc].go", "/w/ab.go"}},
	{name: "range", pattern: "/w/v[0-9]",
		yes: []string{"/w/v0", "/w/v9"},
		no:  []string{"/w/va", "/w/v10"}},
	{name: "negated with bang", pattern: "/w/[!a]",
		yes: []string{"/w/b", "/w/!", "/w/é"},
		no:  []string{"/w/a", "/w/ab"}},
	{name: "negated with caret", pattern: "/w/[^a-c]x",
		yes: []string{"/w/dx"},
		no:  []string{"/w/bx", "/w/x"}},
	{name: "dash first and last is literal", pattern: "/w/[-a][a-]",
		yes: []string{"/w/--", "/w/aa", "/w/-a"},
		no:  []string{"/w/b-"}},
	{name: "unicode set and range", pattern: "/w/[é-ë]",
		yes: []string{"/w/é", "/w/ê"},
		no:  []string{"/w/e", "/w/\xc3"}},
	{name: "invalid utf-8 in a set", pattern: "/w/[\xfe\xff]",
		yes: []string{"/w/\xfe", "/w/\xff"},
		no:  []string{"/w/\xfd", "/w/\xfe\xff"}},
	{name: "brackets spanning a slash are literal", pattern: "/w/[a/b]",
		yes: []string{"/w/[a/b]"},
		no:  []string{"/w/a", "/w/b"}},
	{name: "posix class is not supported", pattern: "/w/[[:alpha:]]",
		yes: []string{"/w/a]", "/w/:]"},
		no:  []string{"/w/a", "/w/[[:alpha:]]"}},
	{name: "backslash is literal", pattern: `/w/a\*b`,
		yes: []string{`/w/a\b`, `/w/a\xyzb`},
		no:  []string{"/w/a*b", "/w/ab"}},
	{name: "backslash before a set", pattern: `/w/\[x]`,
		yes: []string{`/w/\x`},
		no:  []string{"/w/[x]", `/w/\[x]`}},
	{name: "case sensitive", pattern: "/w/*.PEM",
		yes: []string{"/w/a.PEM"},
		no:  []string{"/w/a.pem"}},
	{name: "leading doublestar", pattern: "/**/x",
		yes: []string{"/x", "/a/x", "/a/b/x"},
		no:  []string{"/", "/xa"}},
	{name: "everything", pattern: "/**",
		yes: []string{"/a", "/a/b"},
		no:  []string{"/"}},
	{name: "root", pattern: "/",
		yes: []string{"/"},
		no:  []string{"/a"}},
	{name: "paths are cleaned, relative never match", pattern: "/w/*",
		yes: []string{"/w/a/", "/w//a", "/w/x/../a"},
		no:  []string{"w/a", "", "a"}},
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if re, ok := refRegexp(p); ok {
				for _, s := range append(c.yes, c.no...) {
					if s = filepath.Clean(s); strings.HasPrefix(s, "/") && utf8.ValidString(s) && re.MatchString(s) != p.Match(s) {
						t.Errorf("Match(%q) disagrees with %s", s, re)
					}
				}
			}
			for _, s := range c.yes {
				if !p.Match(s) {
					t.Errorf("%q should match %q", c.pattern, s)
				}
			}
			for _, s := range c.no {
				if p.Match(s) {
					t.Errorf("%q should not match %q", c.pattern, s)
				}
			}
		})
	}
}
