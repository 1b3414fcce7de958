package glob

import (
	"errors"
	"testing"
)

func TestIsPattern(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     bool
	}{
		{"plain path", "/home/u/.env", false},
		{"star", "/home/*", true},
		{"doublestar", "**", true},
		{"question mark", "a?c", true},
		{"set", "/x/[ab]", true},
		{"negated set", "/x/[!a]", true},
		{"reversed range", "/x/[user-id]", false},
		{"empty brackets", "/x/list[].ts", false},
		{"unterminated", "/x/a[b", false},
		{"closing bracket alone", "/x/a]b", false},
		{"brackets across a slash", "/x/[a/b]", false},
		{"invalid then valid", "/x/[z-a][ab]", true},
		{"backslash", `/x/a\b`, false},
		{"empty", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsPattern(c.in); got != c.want {
				t.Errorf("IsPattern(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"empty", ""},
		{"relative", "a/*"},
		{"home", "~/x"},
		{"trailing slash", "/a/*/"},
		{"double slash", "/a//*"},
		{"dot", "/a/./*"},
		{"dot dot", "/a/../*"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compile(c.in); !errors.Is(err, ErrInvalidPattern) {
				t.Errorf("Compile(%q) error = %v, want ErrInvalidPattern", c.in, err)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		name, in, prefix string
		leading          bool
	}{
		{"pem under project", "/home/u/proj/**/*.pem", "/home/u/proj", false},
		{"leading doublestar", "/**/*.pem", "/", true},
		{"leading star", "/*/x", "/", true},
		{"literal path", "/home/u/.env", "/home/u", false},
		{"single literal", "/etc", "/", false},
		{"root", "/", "/", false},
		{"wildcard in the middle", "/a/b*/c/d", "/a", false},
		{"literal brackets", "/a/list[]/*.ts", "/a/list[]", false},
		{"set", "/a/[bc]/d", "/a", false},
		{"trailing doublestar", "/a/b/**", "/a/b", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Prefix(); got != c.prefix {
				t.Errorf("Prefix() = %q, want %q", got, c.prefix)
			}
			if got := p.LeadingWildcard(); got != c.leading {
				t.Errorf("LeadingWildcard() = %v, want %v", got, c.leading)
			}
			if p.String() != c.in {
				t.Errorf("String() = %q", p.String())
			}
		})
	}
}

// TestCompileWithLiteralPrefix: the directory a pattern is written in
// (issue 10, item 16: a working directory named "[WIP] project") is a name,
// whatever characters it holds; only the part the user wrote is a pattern.
func TestCompileWithLiteralPrefix(t *testing.T) {
	for _, c := range []struct {
		name, prefix, rest string
		match, miss        []string
		wantPrefix         string
	}{
		{name: "brackets in the directory", prefix: "/x/[WIP] project", rest: "**/.env",
			match: []string{"/x/[WIP] project/.env", "/x/[WIP] project/a/b/.env"},
			miss:  []string{"/x/W/.env", "/x/P/a/.env"}, wantPrefix: "/x/[WIP] project"},
		{name: "star in the directory", prefix: "/x/a*b", rest: "*.pem",
			match: []string{"/x/a*b/k.pem"}, miss: []string{"/x/aXb/k.pem"}, wantPrefix: "/x/a*b"},
		{name: "doublestar directory name", prefix: "/x/**", rest: "k",
			match: []string{"/x/**/k"}, miss: []string{"/x/a/b/k"}, wantPrefix: "/x/**"},
		{name: "the pattern part still works", prefix: "/x/[ab]", rest: "[cd]/?.txt",
			match: []string{"/x/[ab]/c/1.txt"}, miss: []string{"/x/a/c/1.txt", "/x/[ab]/e/1.txt"}, wantPrefix: "/x/[ab]"},
		{name: "empty rest is the prefix itself", prefix: "/x/[ab]", rest: "",
			match: []string{"/x/[ab]"}, miss: []string{"/x/a"}, wantPrefix: "/x"},
		{name: "root prefix", prefix: "/", rest: "r/*.pem",
			match: []string{"/r/a.pem"}, wantPrefix: "/r"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := CompileWithLiteralPrefix(c.prefix, c.rest)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range c.match {
				if !p.Match(m) {
					t.Errorf("%q does not match %q", p, m)
				}
			}
			for _, m := range c.miss {
				if p.Match(m) {
					t.Errorf("%q matches %q", p, m)
				}
			}
			if got := p.Prefix(); got != c.wantPrefix {
				t.Errorf("Prefix() = %q, want %q", got, c.wantPrefix)
			}
		})
	}
	for _, bad := range [][2]string{{"x", "*"}, {"/x/", "*"}, {"/x", "/a"}, {"/x", "../a"}, {"/x", "a/../b"}, {"/x", ".."}} {
		if _, err := CompileWithLiteralPrefix(bad[0], bad[1]); !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("CompileWithLiteralPrefix(%q, %q) error = %v, want ErrInvalidPattern", bad[0], bad[1], err)
		}
	}
}
