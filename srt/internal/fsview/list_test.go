package fsview

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestListDir: OS lists every entry of a directory of more than one block,
// stops when asked, and refuses what is not a directory without opening
// it for reading (a FIFO would block).
func TestListDir(t *testing.T) {
	dir := t.TempDir()
	const n = 2*listBlock + 7
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	if err := List(OS{}, dir, func(e fs.DirEntry) bool { seen[e.Name()] = true; return true }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("listed %d entries, want %d", len(seen), n)
	}
	count := 0
	if err := List(OS{}, dir, func(fs.DirEntry) bool { count++; return count < 10 }); err != nil || count != 10 {
		t.Fatalf("stopping after 10: listed %d, %v", count, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := List(OS{}, fifo, func(fs.DirEntry) bool { return true }); err == nil {
		t.Fatal("listing a FIFO succeeded")
	}
	// The in-memory FS lists through ReadDir, sorted.
	m := NewMem(map[string]string{"/d/b": "file", "/d/a": "file"})
	var names []string
	List(m, "/d", func(e fs.DirEntry) bool { names = append(names, e.Name()); return true })
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Fatalf("Mem: listed %v", names)
	}
}
