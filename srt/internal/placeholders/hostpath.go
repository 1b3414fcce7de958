//go:build linux

package placeholders

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/kernrand"
)

// openParent opens the directory that holds p (absolute, clean) by walking
// from / one component at a time without following a symlink anywhere. A
// parent that a sandbox re-pointed since the plan was made (a directory
// swapped for a symlink) makes it fail (ENOTDIR) instead of leading srt
// elsewhere: what srt then creates or removes is the entry of that very
// directory. The descriptor is O_PATH, good only as the dirfd of *at calls.
func openParent(p string) (fd int, base string, err error) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return -1, "", fmt.Errorf("placeholder path %q is not a clean absolute path", p)
	}
	fd, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	dir, base := filepath.Split(p)
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOTDIR {
			var st unix.Stat_t
			if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errParentMoved
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, "", fmt.Errorf("placeholder %s: %s: %w", p, c, err)
		}
		fd = next
	}
	return fd, base, nil
}

// errParentMoved: a directory above a placeholder is a symlink now, though
// it was a directory when the plan was made.
var errParentMoved = errors.New("a parent directory was replaced by a symlink since the plan was made")

// createAt makes a placeholder directory, or file holding content, as
// name in dir, and returns a descriptor of it to hold it by.
func createAt(dir int, name string, isDir bool, content string) (int, error) {
	if isDir {
		if err := unix.Mkdirat(dir, name, 0o755); err != nil {
			return -1, err
		}
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
		}
		return fd, err
	}
	fd, err := unix.Openat(dir, name, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return -1, err
	}
	for b := []byte(content); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			unix.Close(fd)
			unix.Unlinkat(dir, name, 0)
			return -1, err
		}
		b = b[n:]
	}
	return fd, nil
}

// tmpPrefix starts the temporary name under which srt makes a placeholder
// before it gives it the wanted name (makeAt), followed by random hex
// digits: a name no one else uses, so that a sweep may remove what is
// there once no one holds it.
const tmpPrefix = ".srt-placeholder-"

// tmpName draws a temporary name for a placeholder.
func tmpName() string {
	var b [8]byte
	kernrand.Fill(b[:])
	return tmpPrefix + hex.EncodeToString(b[:])
}

// errNoPlace: the filesystem can neither rename without replacing nor
// link the entry (place).
var errNoPlace = errors.New("no rename without replacing on this filesystem")

// place gives the entry tmp of dir the name base, only while nothing has
// that name: EEXIST otherwise. Where the filesystem cannot rename so, a
// file is linked and its temporary name removed; errNoPlace when neither
// can be done.
func place(dir int, tmp, base string, isDir bool) error {
	err := unix.Renameat2(dir, tmp, dir, base, unix.RENAME_NOREPLACE)
	if err != unix.EINVAL && err != unix.ENOSYS {
		return err
	}
	if isDir {
		return errNoPlace
	}
	switch err := unix.Linkat(dir, tmp, dir, base, 0); err {
	case nil:
		unix.Unlinkat(dir, tmp, 0)
		return nil
	case unix.EEXIST:
		return err
	default:
		return errNoPlace
	}
}

// discard removes the entry tmp of dir that makeAt made and has not given
// its wanted name, and closes fd, its descriptor.
func discard(dir int, tmp string, fd int, isDir bool) {
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	unix.Unlinkat(dir, tmp, flags)
	unix.Close(fd)
}

// holds says whether the open file fd holds exactly content.
func holds(fd int, content string) bool {
	if content == "" {
		return true // the size said so
	}
	buf := make([]byte, len(content)+1)
	n, _ := unix.Pread(fd, buf, 0)
	return n >= 0 && string(buf[:n]) == content
}

// removeTree removes the entry name of directory parent and, when it is a
// directory, everything in it, following no symlink.
func removeTree(parent int, name string) error {
	err := unix.Unlinkat(parent, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	fd, oerr := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if oerr != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		removeTree(fd, n)
	}
	f.Close()
	return unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
}
