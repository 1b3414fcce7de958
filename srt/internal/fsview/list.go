package fsview

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Lister is an FS that can list a directory a block of entries at a time,
// unsorted: a directory a command filled with a million entries then costs
// a pass over them, not a sorted copy of all of them in memory.
type Lister interface {
	// ListDir calls f with each entry of the directory name, in the
	// order the directory gives them, until f returns false.
	ListDir(name string, f func(fs.DirEntry) bool) error
}

// listBlock is how many entries one read of a directory returns.
const listBlock = 1024

// ListDir implements Lister.
func (OS) ListDir(name string, f func(fs.DirEntry) bool) error {
	// O_DIRECTORY: a directory swapped for a FIFO meanwhile fails the
	// open instead of blocking it.
	d, err := os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		ents, err := d.ReadDir(listBlock)
		for _, e := range ents {
			if !f(e) {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// List calls f with each entry of the directory name, until f returns
// false: through ListDir where fsys has it, else through ReadDir (sorted).
func List(fsys FS, name string, f func(fs.DirEntry) bool) error {
	if l, ok := fsys.(Lister); ok {
		return l.ListDir(name, f)
	}
	ents, err := fsys.ReadDir(name)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !f(e) {
			return nil
		}
	}
	return nil
}
