package fsview

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
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

func TestResolveBeneathReportsEveryLink(t *testing.T) {
	m := NewMem(map[string]string{
		"/home/u/proj/out":  "-> ../link/sub",
		"/home/u/link":      "-> /data",
		"/data/sub/file":    "file",
		"/home/u/proj/file": "file",
	})
	var met []string
	got, missing, err := ResolveBeneath(m, "/home/u", "proj/out/file/../new", func(link, target string) error {
		met = append(met, link+" -> "+target)
		return nil
	})
	// "file/.." is resolved as the kernel does: file is not a directory.
	if err == nil {
		t.Fatalf("want ENOTDIR, got %q %q", got, missing)
	}
	met = nil
	got, missing, err = ResolveBeneath(m, "/home/u", "proj/out/new", func(link, target string) error {
		met = append(met, link+" -> "+target)
		return nil
	})
	if err != nil || got != "/data/sub" || missing != "new" {
		t.Fatalf("got (%q, %q, %v)", got, missing, err)
	}
	want := []string{"/home/u/proj/out -> ../link/sub", "/home/u/link -> /data"}
	if strings.Join(met, "|") != strings.Join(want, "|") {
		t.Fatalf("links met %q, want %q", met, want)
	}
	stop := errors.New("stop")
	if _, _, err := ResolveBeneath(m, "/home/u", "proj/out", func(string, string) error { return stop }); err != stop {
		t.Fatalf("the callback's error is not returned: %v", err)
	}
}

func TestMemOwnership(t *testing.T) {
	m := NewMem(map[string]string{"/home/u/f": "file", "/tmp/x": "-> /home/u"}).
		Own("/home/u", 1000, 100).Chmod("/tmp", fs.ModeSticky|0o777)
	for _, c := range []struct {
		path     string
		uid, gid uint32
		mode     uint32
	}{
		{"/home/u", 1000, 100, syscall.S_IFDIR | 0o755},
		{"/home/u/f", 1000, 100, syscall.S_IFREG | 0o644},
		{"/home", 0, 0, syscall.S_IFDIR | 0o755},
		{"/tmp", 0, 0, syscall.S_IFDIR | syscall.S_ISVTX | 0o777},
		{"/tmp/x", 0, 0, syscall.S_IFLNK | 0o777},
	} {
		fi, err := m.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != c.uid || st.Gid != c.gid || uint32(st.Mode) != c.mode || st.Ino == 0 {
			t.Errorf("%s: uid %d gid %d mode %o ino %d", c.path, st.Uid, st.Gid, st.Mode, st.Ino)
		}
	}
	a, _ := m.Lstat("/home/u")
	b, _ := m.Lstat("/home/u/f")
	if a.Sys().(*syscall.Stat_t).Ino == b.Sys().(*syscall.Stat_t).Ino {
		t.Error("two files share an inode number")
	}
}
