package initstage

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The read-only supervisor's decisions: an entry of a granted directory
// or beneath a chain directory is allowed; a protected name of a chain
// directory, a protected directory, and anything with no grant above are
// refused; a file granted on its own is allowed whatever its directory; a
// directory is decided by its own place.
func TestReadOnlyDecisions(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"w/.git/hooks", "w/g/x", "w/new", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"w/.bashrc", "w/f", "other/granted", "other/plain"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := filepath.Join(root, "w")
	c := newChainSet([]Chain{{Path: w, Protected: []string{".git", ".bashrc"}}, {Path: w + "/.git", Protected: []string{"hooks"}}},
		[]string{w + "/g", w + "/f", root + "/other/granted"}, nil)
	open := func(rel string) int {
		fd, err := unix.Open(filepath.Join(root, rel), unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	for _, e := range []struct {
		dir, name string
		want      int
	}{
		{"w", "f", allowed}, {"w", "made-later", allowed}, {"w", ".bashrc", refusedRO}, {"w", ".git", refusedRO},
		{"w/.git", "config", allowed}, {"w/.git", "hooks", refusedRO}, {"w/.git/hooks", "pre-commit", refusedRO},
		{"w/g", "y", allowed}, {"w/g/x", "y", allowed}, {"w/new", "y", allowed},
		{"other", "plain", refusedRO}, {".", "other", refusedRO},
	} {
		fd := open(e.dir)
		if got := entryClass(&c.w, fd, e.name); got != e.want {
			t.Errorf("entry %s/%s: %d, want %d", e.dir, e.name, got, e.want)
		}
		unix.Close(fd)
	}
	for _, f := range []struct {
		dir, name string
		want      int
	}{
		{"other", "granted", allowed}, {"other", "plain", refusedRO}, {"w", "f", allowed}, {"w", ".bashrc", refusedRO},
		{"w/.git", "hooks", refusedRO}, {"w", ".git", allowed}, {"w", "g", allowed}, {"w", "new", allowed}, {".", "other", refusedRO},
		{".", "w", allowed},
	} {
		dir, fd := open(f.dir), open(filepath.Join(f.dir, f.name))
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		if got := fileClass(&c.w, dir, f.name, fd, &st); got != f.want {
			t.Errorf("file %s/%s: %d, want %d", f.dir, f.name, got, f.want)
		}
		// A directory known by its descriptor alone decides the same.
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if got := fileClass(&c.w, -1, "", fd, &st); got != f.want {
				t.Errorf("directory %s/%s by descriptor: %d, want %d", f.dir, f.name, got, f.want)
			}
		}
		unix.Close(dir)
		unix.Close(fd)
	}
}

// FuzzDecodeTimes: the times a command passes decode without panic, to
// two times, with a timeval's microseconds in range, or fail.
func FuzzDecodeTimes(f *testing.F) {
	f.Add(0, make([]byte, 32))
	f.Add(1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0x42, 0x0f, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(1, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add(2, []byte{0x80, 0x51, 0x01, 0, 0, 0, 0, 0, 0x80, 0x51, 0x01, 0, 0, 0, 0, 0})
	f.Add(0, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0x3f, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, kind int, b []byte) {
		kind &= 3
		if kind == 3 {
			kind = timesBuf
		}
		ts, err := decodeTimes(kind, b)
		if err != nil {
			if ts != nil {
				t.Fatalf("times with an error: %v", ts)
			}
			if len(b) == timesSize[kind] && kind != timesVal {
				t.Fatalf("kind %d of %d bytes refused: %v", kind, len(b), err)
			}
			return
		}
		if len(ts) != 2 || len(b) != timesSize[kind] {
			t.Fatalf("kind %d of %d bytes: %v", kind, len(b), ts)
		}
		for _, x := range ts {
			if kind == timesVal && (x.Nsec < 0 || x.Nsec >= 1e9 || x.Nsec%1000 != 0) {
				t.Fatalf("a timeval decoded out of range: %v", ts)
			}
			if kind == timesBuf && x.Nsec != 0 {
				t.Fatalf("a utimbuf with nanoseconds: %v", ts)
			}
		}
	})
}
