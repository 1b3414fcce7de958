package fsview

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks matches the kernel's limit (MAXSYMLINKS in fs/namei.c).
const maxSymlinks = 40

// ErrLoop is returned when resolving a path meets too many symlinks.
var ErrLoop = errors.New("too many levels of symbolic links")

// Realpath resolves every symlink in the absolute path p. It fails with an
// error satisfying errors.Is(err, fs.ErrNotExist) when a component is missing.
func Realpath(f FS, p string) (string, error) {
	resolved, rest, err := resolve(f, p)
	if err != nil {
		return "", err
	}
	if rest != "" {
		return "", &fs.PathError{Op: "realpath", Path: p, Err: fs.ErrNotExist}
	}
	return resolved, nil
}

// ResolveExisting resolves the longest existing prefix of p and returns it
// together with the components that do not exist yet (joined by "/", empty
// when the whole path exists). A missing path is not an error; a component
// that exists but is not a directory while more components follow is.
func ResolveExisting(f FS, p string) (existing, missing string, err error) {
	return resolve(f, p)
}

// LinkFunc is called for each symlink met while a path is resolved: link
// is where the symlink is (the directories above it resolved), target its
// content as stored. An error stops the resolution and is returned as is.
type LinkFunc func(link, target string) error

// ResolveBeneath resolves rest, a relative path, beneath the directory
// base, which must be a real path (absolute, clean, no symlinks), the way
// ResolveExisting does, and calls onLink (when not nil) for every symlink
// it meets on the way, those met inside a symlink's target included.
func ResolveBeneath(f FS, base, rest string, onLink LinkFunc) (existing, missing string, err error) {
	if !filepath.IsAbs(base) {
		return "", "", &fs.PathError{Op: "realpath", Path: base, Err: errors.New("path is not absolute")}
	}
	return resolveFrom(f, filepath.Clean(base), splitPath(rest), onLink)
}

func resolve(f FS, p string) (string, string, error) {
	if !filepath.IsAbs(p) {
		return "", "", &fs.PathError{Op: "realpath", Path: p, Err: errors.New("path is not absolute")}
	}
	return resolveFrom(f, "/", splitPath(filepath.Clean(p)), nil)
}

func resolveFrom(f FS, cur string, todo []string, onLink LinkFunc) (string, string, error) {
	p := filepath.Join(append([]string{cur}, todo...)...)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := f.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return cur, strings.Join(append([]string{name}, todo...), "/"), nil
			}
			if errors.Is(err, syscall.ENOTDIR) {
				return "", "", &fs.PathError{Op: "realpath", Path: p, Err: syscall.ENOTDIR}
			}
			return "", "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(todo) > 0 && !fi.IsDir() {
				return "", "", &fs.PathError{Op: "realpath", Path: p, Err: syscall.ENOTDIR}
			}
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", "", &fs.PathError{Op: "realpath", Path: p, Err: ErrLoop}
		}
		target, err := f.Readlink(next)
		if err != nil {
			return "", "", err
		}
		if onLink != nil {
			if err := onLink(next, target); err != nil {
				return "", "", err
			}
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return cur, "", nil
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Stat follows symlinks and describes the file p finally names.
func Stat(f FS, p string) (string, fs.FileInfo, error) {
	rp, err := Realpath(f, p)
	if err != nil {
		return "", nil, err
	}
	fi, err := f.Lstat(rp)
	return rp, fi, err
}

// IsWithin reports whether p is dir or lies beneath it. Both must be clean
// absolute paths.
func IsWithin(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
