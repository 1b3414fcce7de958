package glob

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// indexedFS answers ReadDir from an index built once. fsview.Mem scans every
// node on each ReadDir, which would make the benchmark measure Mem rather
// than Expand; Lstat and Readlink still go to the Mem.
type indexedFS struct {
	*fsview.Mem
	kids map[string][]fs.DirEntry
}

func newIndexedFS(spec map[string]string) *indexedFS {
	m := fsview.NewMem(spec)
	x := &indexedFS{Mem: m, kids: map[string][]fs.DirEntry{}}
	for _, p := range treePaths(spec) { // sorted, so children come in order
		if p == "/" {
			continue
		}
		fi, err := m.Lstat(p)
		if err != nil {
			panic(err)
		}
		d := filepath.Dir(p)
		x.kids[d] = append(x.kids[d], fs.FileInfoToDirEntry(fi))
	}
	return x
}

func (x *indexedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if fi, err := x.Lstat(name); err != nil || !fi.IsDir() || fi.Mode().Perm() == 0 {
		return x.Mem.ReadDir(name) // for its errors
	}
	return x.kids[name], nil
}

// benchTree is a project of 50 × 10 directories of 100 files each: 50,000
// files, one in a hundred a .pem.
func benchTree(add func(path string)) {
	for i := range 50 {
		for j := range 10 {
			for k := range 100 {
				ext := ".go"
				if k == 7 {
					ext = ".pem"
				}
				add(fmt.Sprintf("/home/u/proj/d%02d/s%d/f%03d%s", i, j, k, ext))
			}
		}
	}
}

func BenchmarkExpand(b *testing.B) {
	spec := map[string]string{}
	benchTree(func(p string) { spec[p] = "file" })
	x := newIndexedFS(spec)
	p, _ := Compile("/home/u/proj/**/*.pem")
	for b.Loop() {
		e, err := Expand(x, p, ExpandOptions{})
		if err != nil || len(e.Matches) != 500 {
			b.Fatalf("%d matches, %v", len(e.Matches), err)
		}
	}
}

// BenchmarkExpandOS runs the same expansion over the real filesystem.
func BenchmarkExpandOS(b *testing.B) {
	if testing.Short() {
		b.Skip("creates 50,000 files")
	}
	root := b.TempDir()
	benchTree(func(p string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	})
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := Compile(real + "/home/u/proj/**/*.pem")
	for b.Loop() {
		e, err := Expand(fsview.OS{}, p, ExpandOptions{})
		if err != nil || len(e.Matches) != 500 {
			b.Fatalf("%d matches, %v", len(e.Matches), err)
		}
	}
}
