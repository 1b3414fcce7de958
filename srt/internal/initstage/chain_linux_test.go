package initstage

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestChainSplit(t *testing.T) {
	for _, c := range []struct {
		path, dir, name string
		slash, ok       bool
	}{
		{"a", ".", "a", false, true},
		{"a/", ".", "a", true, true},
		{"/a", "/", "a", false, true},
		{"/x/y//z//", "/x/y/", "z", true, true},
		{"x/..", "", "", false, false},
		{".", "", "", false, false},
		{"/", "", "", true, false},
		{"a/./", "", "", true, false},
	} {
		dir, name, slash, ok := split(c.path)
		if dir != c.dir || name != c.name || slash != c.slash || ok != c.ok {
			t.Errorf("%q: got %q %q %v %v", c.path, dir, name, slash, ok)
		}
	}
}

// classify tells a chain directory, what lies beneath it by a name it may
// change, a protected region and a Landlock write grant apart, by the
// directory's inode and those above it.
func TestChainClassify(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"w/.git/hooks/sub", "w/p/x", "w/g/x", "w/new/deep", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := filepath.Join(root, "w")
	c := newChainSet([]Chain{{Path: w, Protected: []string{".git", "p", ".bashrc"}}, {Path: w + "/.git", Protected: []string{"hooks"}}}, []string{w + "/g"}, nil)
	for rel, want := range map[string]int{
		"w": clsChain, "w/.git": clsChain, "w/new": clsBelow, "w/new/deep": clsBelow,
		"w/.git/hooks": clsNone, "w/.git/hooks/sub": clsNone, "w/p": clsNone, "w/p/x": clsNone,
		"w/g": clsRoot, "w/g/x": clsRoot, "other": clsNone, ".": clsNone,
	} {
		fd, err := unix.Open(filepath.Join(root, rel), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, near := range []bool{false, true} {
			if got, _ := c.w.classify(fd, near); got != want {
				t.Errorf("%s (near %v): class %d, want %d", rel, near, got, want)
			}
		}
		unix.Close(fd)
	}
	// In w, the protected names are refused, others allowed.
	e, ok := c.open(unix.AT_FDCWD, w+"/.bashrc", os.Getpid(), true, false)
	if !ok || e.changeable() {
		t.Errorf(".bashrc: %v %+v", ok, e)
	}
	e.close()
	e, ok = c.open(unix.AT_FDCWD, w+"/out.txt", os.Getpid(), true, false)
	if !ok || !e.changeable() {
		t.Errorf("out.txt: %v %+v", ok, e)
	}
	e.close()
	// Through a symlink to the hooks: the hooks, whatever the path says.
	if err := os.Symlink(".git/hooks", filepath.Join(w, "hk")); err != nil {
		t.Fatal(err)
	}
	e, ok = c.open(unix.AT_FDCWD, w+"/hk/x", os.Getpid(), true, false)
	if !ok || e.changeable() || e.writable() {
		t.Errorf("hk/x: %v %+v", ok, e)
	}
	e.close()
	// /proc/self is the thread's: its working directory, here w/.git.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(w + "/.git")
	e, ok = c.open(unix.AT_FDCWD, "/proc/self/cwd/hooks/x", unix.Gettid(), true, false)
	if !ok || e.cls != clsNone {
		t.Errorf("/proc/self/cwd/hooks/x: %v %+v", ok, e)
	}
	e.close()
	e, ok = c.open(unix.AT_FDCWD, "/proc/self/cwd/x", unix.Gettid(), true, false)
	if !ok || e.cls != clsChain || !e.changeable() {
		t.Errorf("/proc/self/cwd/x: %v %+v", ok, e)
	}
	e.close()
}

// BenchmarkChainClassify: the walk up from a directory three levels below
// a chain directory.
func BenchmarkChainClassify(b *testing.B) {
	root := b.TempDir()
	os.MkdirAll(filepath.Join(root, "w/a/b/c"), 0o755)
	c := newChainSet([]Chain{{Path: filepath.Join(root, "w"), Protected: []string{".git"}}}, nil, nil)
	fd, _ := unix.Open(filepath.Join(root, "w/a/b/c"), unix.O_PATH|unix.O_DIRECTORY, 0)
	defer unix.Close(fd)
	for i := 0; i < b.N; i++ {
		if cls, _ := c.w.classify(fd, true); cls != clsBelow {
			b.Fatal(cls)
		}
	}
}

// A directory listed twice protects the names of both lists; a chain of
// the reads goes to the reads' set, and never loosens the writes'.
func TestChainSetMerges(t *testing.T) {
	w := t.TempDir()
	c := newChainSet([]Chain{
		{Path: w, Protected: []string{".bashrc", ".mcp.json"}},
		{Path: w, Protected: []string{".git"}},
		{Path: w, Protected: []string{".env"}, Reads: true},
	}, nil, nil)
	if len(c.w.dirs) != 1 || len(c.r.dirs) != 1 {
		t.Fatalf("sets: %d %d", len(c.w.dirs), len(c.r.dirs))
	}
	for _, d := range c.w.dirs {
		for _, n := range []string{".bashrc", ".mcp.json", ".git"} {
			if !d.protected[n] {
				t.Errorf("%s is not protected for writes", n)
			}
		}
		if d.protected[".env"] {
			t.Error("a hidden name of the reads' set is in the writes'")
		}
	}
}

// Another name of a protected entry (a case-insensitive directory's
// ".GIT", which this test stands in for with a hard link) is refused as
// the name is, for the writes and for the reads.
func TestChainProtectedAlias(t *testing.T) {
	w := t.TempDir()
	for _, n := range []string{".bashrc", ".env"} {
		if err := os.WriteFile(filepath.Join(w, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Link(filepath.Join(w, ".bashrc"), filepath.Join(w, ".BASHRC"))
	os.Link(filepath.Join(w, ".env"), filepath.Join(w, ".ENV"))
	os.WriteFile(filepath.Join(w, "plain"), nil, 0o644)
	c := newChainSet([]Chain{
		{Path: w, Protected: []string{".bashrc", ".env"}},
		{Path: w, Protected: []string{".env"}, Reads: true},
	}, nil, nil)
	for name, want := range map[string][2]bool{".BASHRC": {false, true}, ".ENV": {false, false}, "plain": {true, true}, "new": {true, true}} {
		e, ok := c.open(unix.AT_FDCWD, w+"/"+name, os.Getpid(), true, true)
		if !ok {
			t.Fatalf("%s: not opened", name)
		}
		if e.changeable() != want[0] || e.readableHere() != want[1] {
			t.Errorf("%s: changeable %v, readable %v, want %v", name, e.changeable(), e.readableHere(), want)
		}
		e.close()
	}
}
