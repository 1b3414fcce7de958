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
