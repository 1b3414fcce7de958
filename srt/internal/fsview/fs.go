package fsview

import (
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"
)

// FS is the subset of filesystem access the plan builder needs.
type FS interface {
	// Lstat describes name without following a final symlink.
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Readlink returns a symlink's target as stored.
	Readlink(name string) (string, error)
	// ReadFile returns the first max bytes of a file (a .git file's
	// gitdir: line, a commondir), following symlinks.
	ReadFile(name string, max int) ([]byte, error)
}

// OS is the host filesystem.
type OS struct{}

// Lstat implements FS.
func (OS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// ReadDir implements FS.
func (OS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(name)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// Readlink implements FS.
func (OS) Readlink(name string) (string, error) { return os.Readlink(name) }

// ReadFile implements FS. It does not block on a FIFO.
func (OS) ReadFile(name string, max int) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EINVAL}
	}
	buf := make([]byte, max)
	n, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return buf[:n], err
}
