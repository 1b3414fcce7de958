package hostexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUntrusted is matched (errors.Is) by the errors of a program srt will
// not run.
var ErrUntrusted = errors.New("untrusted program")

// untrustedError is a refusal: its text is the whole message (what, why,
// the fix), and it matches ErrUntrusted.
type untrustedError struct{ msg string }

func (e *untrustedError) Error() string        { return e.msg }
func (e *untrustedError) Is(target error) bool { return target == ErrUntrusted }

// ErrMissing is matched (errors.Is) by the errors of a program srt needs
// that is missing, too old or broken: bubblewrap, the shell, decider,
// srt-proxy.
var ErrMissing = errors.New("missing program")

// missingError is a missing program: its text is the whole message, which
// names the program and the fix; it matches ErrMissing.
type missingError struct{ err error }

func (e *missingError) Error() string        { return e.err.Error() }
func (e *missingError) Unwrap() error        { return e.err }
func (e *missingError) Is(target error) bool { return target == ErrMissing }

// Missingf is the error of a missing program: the message, which must name
// the program, is formatted as by fmt.Errorf.
func Missingf(format string, a ...any) error {
	return &missingError{fmt.Errorf(format, a...)}
}

// Program is a program srt runs, resolved and checked on the host.
type Program struct {
	// Name is what the messages call it: "bwrap", "srt-init", …
	Name string
	// Path is where it was configured or found; Real is the path with
	// every symlink resolved: what srt runs.
	Path, Real string
	// Fix says what the user can do when srt refuses it.
	Fix   string
	steps []step
}

// step is one directory entry the resolution went through: the entry, not
// followed, and the directory that holds it.
type step struct {
	path   string // the entry's path, below real directories only
	st     unix.Stat_t
	parent unix.Stat_t
}

// maxLinks bounds the symlinks one resolution follows, as the kernel does.
const maxLinks = 40

// Resolve resolves p one component at a time, following symlinks, and
// checks on the host every entry on the way and the file it ends at (see
// the package documentation). uid is the caller's.
func Resolve(name, p, fix string, uid int) (*Program, error) {
	prog := &Program{Name: name, Path: p, Fix: fix}
	if !filepath.IsAbs(p) {
		return nil, prog.refuse("%s is not an absolute path", p)
	}
	var root unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		return nil, err
	}
	if err := prog.dirOK("/", root, uid); err != nil {
		return nil, err
	}
	dir, dirSt := "/", root
	rest := components(p)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			dir = filepath.Dir(dir)
			if err := unix.Stat(dir, &dirSt); err != nil {
				return nil, prog.missing(err)
			}
			continue
		}
		entry := filepath.Join(dir, c)
		var st unix.Stat_t
		if err := unix.Lstat(entry, &st); err != nil {
			return nil, prog.missing(err)
		}
		prog.steps = append(prog.steps, step{path: entry, st: st, parent: dirSt})
		if err := prog.ownerOK(entry, st, uid); err != nil {
			return nil, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if links++; links > maxLinks {
				return nil, prog.missing(unix.ELOOP)
			}
			target, err := os.Readlink(entry)
			if err != nil {
				return nil, prog.missing(err)
			}
			if filepath.IsAbs(target) {
				dir, dirSt = "/", root
			}
			rest = append(components(target), rest...)
		case unix.S_IFDIR:
			if err := prog.dirOK(entry, st, uid); err != nil {
				return nil, err
			}
			dir, dirSt = entry, st
		default:
			if len(rest) > 0 {
				return nil, prog.missing(unix.ENOTDIR)
			}
			return prog, prog.fileOK(entry, st)
		}
	}
	return nil, prog.refuse("%s is a directory, not a program", dir)
}

func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// ownerOK: an entry owned by someone other than root or the caller could
// have been put there, or changed, by them.
func (p *Program) ownerOK(path string, st unix.Stat_t, uid int) error {
	if !trustedOwner(st.Uid, uid) {
		return p.refuse("%s is owned by uid %d, neither root nor uid %d (the user srt runs as)", path, st.Uid, uid)
	}
	return nil
}

// dirOK: a directory others may write could have had any entry replaced,
// unless it is sticky, where only an entry's owner (or the directory's)
// may rename or remove it.
func (p *Program) dirOK(path string, st unix.Stat_t, uid int) error {
	if err := p.ownerOK(path, st, uid); err != nil {
		return err
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return p.refuse("the directory %s is writable by other users (mode %04o); run chmod go-w on it", path, st.Mode&0o7777)
	}
	return nil
}

// fileOK: the program itself is a regular executable file no one but its
// owner may change.
func (p *Program) fileOK(path string, st unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		return p.refuse("%s is not an executable file", path)
	}
	if st.Mode&0o022 != 0 {
		return p.refuse("%s is writable by other users (mode %04o); run chmod go-w on it", path, st.Mode&0o7777)
	}
	p.Real = path
	return nil
}

func (p *Program) refuse(format string, args ...any) error {
	return &untrustedError{fmt.Sprintf("%s at %s: %s; srt will not run it: %s", p.Name, p.Path, fmt.Sprintf(format, args...), p.Fix)}
}

func (p *Program) missing(err error) error {
	return fmt.Errorf("%s at %s cannot be used: %w", p.Name, p.Path, err)
}
