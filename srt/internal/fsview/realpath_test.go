package fsview

import (
	"errors"
	"io/fs"
	"testing"
)

func TestRealpath(t *testing.T) {
	m := NewMem(map[string]string{
		"/home/u/proj/file":  "file",
		"/home/u/link":       "-> proj",
		"/home/u/abs":        "-> /etc",
		"/etc/passwd":        "file",
		"/home/u/loop":       "-> loop",
		"/home/u/up":         "-> ..",
		"/home/u/dangling":   "-> /nowhere/x",
		"/home/u/proj/chain": "-> ../link/file",
	})
	cases := []struct {
		name, in, want, missing string
		err                     error
	}{
		{name: "plain", in: "/home/u/proj/file", want: "/home/u/proj/file"},
		{name: "relative link", in: "/home/u/link/file", want: "/home/u/proj/file"},
		{name: "absolute link", in: "/home/u/abs/passwd", want: "/etc/passwd"},
		{name: "dotdot link", in: "/home/u/up/u/proj", want: "/home/u/proj"},
		{name: "chain", in: "/home/u/proj/chain", want: "/home/u/proj/file"},
		{name: "missing tail", in: "/home/u/proj/new/deeper", want: "/home/u/proj", missing: "new/deeper"},
		{name: "dangling", in: "/home/u/dangling", want: "/", missing: "nowhere/x"},
		{name: "loop", in: "/home/u/loop", err: ErrLoop},
		{name: "file as dir", in: "/home/u/proj/file/x", err: errors.New("not a directory")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, missing, err := ResolveExisting(m, c.in)
			if c.err != nil {
				if err == nil {
					t.Fatalf("want error %v, got %q", c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || missing != c.missing {
				t.Fatalf("got (%q, %q), want (%q, %q)", got, missing, c.want, c.missing)
			}
			_, rerr := Realpath(m, c.in)
			if (c.missing != "") != errors.Is(rerr, fs.ErrNotExist) {
				t.Fatalf("Realpath error %v for missing=%q", rerr, c.missing)
			}
		})
	}
}

func TestIsWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/x", "/", true}, {"/a", "/a/b", false},
	} {
		if got := IsWithin(c.p, c.dir); got != c.want {
			t.Errorf("IsWithin(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}
