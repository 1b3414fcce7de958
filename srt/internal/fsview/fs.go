package fsview

import (
	"io/fs"
	"os"
	"sort"
)

// FS is the subset of filesystem access the plan builder needs.
type FS interface {
	// Lstat describes name without following a final symlink.
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Readlink returns a symlink's target as stored.
	Readlink(name string) (string, error)
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
