package glob

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// countingFS records which directories were listed.
type countingFS struct {
	fsview.FS
	listed []string
}

func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.listed = append(c.listed, name)
	return c.FS.ReadDir(name)
}

var expandTree = map[string]string{
	"/r/a.pem":              "file",
	"/r/.env":               "file",
	"/r/src/.env":           "file",
	"/r/src/key.pem":        "file",
	"/r/src/deep/x/y.pem":   "file",
	"/r/src/deep/x/note":    "file",
	"/r/certs.pem/inner":    "file",
	"/r/certs.pem/in.pem":   "file",
	"/r/link":               "-> /other",
	"/r/src/self":           "-> ..",
	"/r/src/dangling.pem":   "-> /nowhere",
	"/other/secret.pem":     "file",
	"/r/locked":             "unreadable",
	"/r/list[].ts":          "file",
	"/r/[user-id]/page.tsx": "file",
	"/r/users/u1/id/key":    "file",
	"/r/users/u2/id/key":    "file",
	"/r/users/u3/id":        "file",
	"/r/users/u4/id":        "-> ../u1/id",
	"/r/plain":              "file",
	"/via":                  "-> /r/src",
	"/up/root":              "-> /",
	"/up/sub/in.pem":        "file",
}

func TestExpand(t *testing.T) {
	cases := []struct {
		name       string
		pattern    string
		follow     bool
		matches    []string
		unlistable []string
		loops      []string
		listed     []string // if set, exactly the directories listed
	}{
		{name: "pem at any depth", pattern: "/r/**/*.pem",
			matches: []string{"/r/a.pem", "/r/certs.pem", "/r/certs.pem/in.pem", "/r/src/dangling.pem", "/r/src/deep/x/y.pem", "/r/src/key.pem"},
			// /r/locked could hold a .pem: the caller denies it whole.
			unlistable: []string{"/r/locked"}},
		{name: "pem following symlinks", pattern: "/r/**/*.pem", follow: true,
			// /r/src/self leads back to /r in the same state: a cycle, cut.
			matches: []string{"/r/a.pem", "/r/certs.pem", "/r/certs.pem/in.pem", "/r/link/secret.pem",
				"/r/src/dangling.pem", "/r/src/deep/x/y.pem", "/r/src/key.pem"},
			unlistable: []string{"/r/locked"}},
		// /r/src/self leads above the prefix, in a new state: following
		// it would walk /r again from its top. It is reported, not walked.
		{name: "symlink to an ancestor is not followed", pattern: "/r/src/*/*.pem", follow: true,
			loops: []string{"/r/src/self"}},
		{name: "symlink to the root is not followed", pattern: "/up/**/*.pem", follow: true,
			matches: []string{"/up/sub/in.pem"}, loops: []string{"/up/root"}},
		{name: "env in the directory only", pattern: "/r/.env",
			matches: []string{"/r/.env"}, listed: []string{}},
		{name: "env at any depth", pattern: "/r/**/.env",
			matches: []string{"/r/.env", "/r/src/.env"}, unlistable: []string{"/r/locked"}},
		{name: "star lists one directory", pattern: "/r/*.pem",
			matches: []string{"/r/a.pem", "/r/certs.pem"}, listed: []string{"/r"}},
		{name: "star matches dotfiles and symlinks", pattern: "/r/src/*",
			matches: []string{"/r/src/.env", "/r/src/dangling.pem", "/r/src/deep", "/r/src/key.pem", "/r/src/self"}},
		{name: "literal segments are looked up, not listed", pattern: "/r/users/*/id/key",
			matches: []string{"/r/users/u1/id/key", "/r/users/u2/id/key"}, listed: []string{"/r/users"}},
		{name: "literal segment through a symlink is not followed", pattern: "/r/users/*/id/*",
			matches: []string{"/r/users/u1/id/key", "/r/users/u2/id/key"}},
		{name: "literal brackets", pattern: "/r/[user-id]/*.tsx",
			matches: []string{"/r/[user-id]/page.tsx"}, listed: []string{"/r/[user-id]"}},
		{name: "literal file", pattern: "/r/list[].ts", matches: []string{"/r/list[].ts"}, listed: []string{}},
		{name: "trailing doublestar excludes the directory", pattern: "/r/src/deep/**",
			matches: []string{"/r/src/deep/x", "/r/src/deep/x/note", "/r/src/deep/x/y.pem"}},
		{name: "unreadable prefix", pattern: "/r/locked/*", unlistable: []string{"/r/locked"}},
		{name: "unreadable directory not needed", pattern: "/r/src/*.pem",
			matches: []string{"/r/src/dangling.pem", "/r/src/key.pem"}},
		{name: "missing prefix", pattern: "/r/nope/**/*.pem"},
		{name: "prefix is a file", pattern: "/r/plain/*"},
		{name: "prefix through a symlink is followed", pattern: "/via/*.pem",
			matches: []string{"/via/dangling.pem", "/via/key.pem"}},
		{name: "symlink is a match but not entered", pattern: "/r/l*",
			matches: []string{"/r/link", "/r/list[].ts", "/r/locked"}},
		{name: "root pattern", pattern: "/", matches: []string{"/"}},
	}
	m := fsview.NewMem(expandTree)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			cf := &countingFS{FS: m}
			got, err := Expand(cf, p, ExpandOptions{FollowSymlinks: c.follow})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Matches, c.matches) {
				t.Errorf("matches:\n got  %q\n want %q", got.Matches, c.matches)
			}
			if !slices.Equal(got.Unlistable, c.unlistable) {
				t.Errorf("unlistable:\n got  %q\n want %q", got.Unlistable, c.unlistable)
			}
			if !slices.Equal(got.Loops, c.loops) {
				t.Errorf("loops:\n got  %q\n want %q", got.Loops, c.loops)
			}
			if c.listed != nil && !slices.Equal(cf.listed, c.listed) {
				t.Errorf("listed %q, want %q", cf.listed, c.listed)
			}
		})
	}
}

func TestExpandSymlinkLoopTerminates(t *testing.T) {
	m := fsview.NewMem(map[string]string{
		"/r/a/b/loop": "-> /r",
		"/r/a/up":     "-> ..",
		"/r/a/k.pem":  "file",
	})
	p, _ := Compile("/r/**/*.pem")
	got, err := Expand(m, p, ExpandOptions{FollowSymlinks: true, MaxEntries: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Both links lead back to /r in the state it was walked in.
	want := []string{"/r/a/k.pem"}
	if !slices.Equal(got.Matches, want) {
		t.Errorf("got %q, want %q", got.Matches, want)
	}
}

func TestExpandTooManyEntries(t *testing.T) {
	spec := map[string]string{}
	for _, d := range []string{"a", "b", "c"} {
		for _, f := range []string{"1", "2", "3", "4"} {
			spec["/r/"+d+"/"+f] = "file"
		}
	}
	m := fsview.NewMem(spec)
	cases := []struct {
		name, pattern string
		max           int
		fail          bool
	}{
		{name: "fits", pattern: "/r/**", max: 15},
		{name: "one over", pattern: "/r/**", max: 14, fail: true},
		{name: "pruned walk fits", pattern: "/r/a/*", max: 4},
		{name: "lookups count", pattern: "/r/*/1", max: 5, fail: true},
		{name: "default is large", pattern: "/r/**", max: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := Compile(c.pattern)
			got, err := Expand(m, p, ExpandOptions{MaxEntries: c.max})
			if !c.fail {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTooManyEntries) {
				t.Fatalf("error = %v, want ErrTooManyEntries", err)
			}
			if !strings.Contains(err.Error(), c.pattern) || !strings.Contains(err.Error(), `"/r`) {
				t.Errorf("error %q does not name the pattern and directory", err)
			}
			if len(got.Matches)+len(got.Unlistable) != 0 {
				t.Errorf("partial expansion returned with error: %+v", got)
			}
		})
	}
}
