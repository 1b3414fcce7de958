package placeholders

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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

type fileID struct{ Dev, Ino uint64 }

// create makes a placeholder directory, or file holding content, at p and
// returns its identity.
func create(p string, dir bool, content string) (fileID, error) {
	fd, base, err := openParent(p)
	if err != nil {
		return fileID{}, err
	}
	defer unix.Close(fd)
	if dir {
		err = unix.Mkdirat(fd, base, 0o755)
	} else {
		var f int
		f, err = unix.Openat(fd, base, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			file := os.NewFile(uintptr(f), p)
			_, err = file.WriteString(content)
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		return fileID{}, &os.PathError{Op: "create", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileID{}, err
	}
	return fileID{Dev: st.Dev, Ino: st.Ino}, nil
}

// identity is the device and inode at p, not following a final symlink.
func identity(p string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return fileID{}, false
	}
	return fileID{Dev: st.Dev, Ino: st.Ino}, true
}

func sameFile(p string, e entry) bool {
	id, ok := identity(p)
	return ok && e.Ino != 0 && id.Dev == e.Dev && id.Ino == e.Ino
}

// removeIfOurs removes a placeholder only while it is still the file
// (holding what srt wrote) or the empty directory srt created (same device
// and inode): anything else is the user's now. The entry is checked and removed relative to its
// parent, opened without following symlinks (openParent), so neither the
// check nor the removal can be redirected to another directory.
func removeIfOurs(e entry) error {
	if e.Ino == 0 {
		return nil
	}
	fd, base, err := openParent(e.Path)
	if err != nil {
		return nil // the parent is gone or is no longer a plain directory: not ours to touch
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Dev != e.Dev || st.Ino != e.Ino {
		return nil
	}
	flags := 0
	switch {
	case e.Dir && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		flags = unix.AT_REMOVEDIR // fails while it is not empty
	case !e.Dir && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == int64(len(e.Content)) && holds(fd, base, e.Content):
	default:
		return nil
	}
	switch err := unix.Unlinkat(fd, base, flags); err {
	case nil, unix.ENOENT, unix.ENOTEMPTY, unix.EEXIST:
		return nil
	default:
		return fmt.Errorf("removing placeholder %s: %w", e.Path, err)
	}
}

// holds says whether the file name of directory dir holds exactly content.
func holds(dir int, name, content string) bool {
	if content == "" {
		return true // the size said so
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	buf := make([]byte, len(content)+1)
	n, _ := io.ReadFull(f, buf)
	return string(buf[:n]) == content
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
