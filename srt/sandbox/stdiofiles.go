//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
)

// ErrStdioFile is matched (errors.Is) by the refusal of a standard
// descriptor that is a file the command could reopen with more access
// than the rules give it by name.
var ErrStdioFile = errors.New("a standard descriptor reopens past the rules")

// checkStdioFiles refuses, as the command's stdin, stdout or stderr, a
// regular file the command could open again through /proc/self/fd/N with
// an access the rules deny it by name. The descriptor refers to the file
// through the host's own mount, not through the read-only bind or the
// cover the plan put over its name, so the reopen is checked against the
// host's mount (writable), the file's permissions and Landlock only (the
// third fresh review of issue 10 rewrote a denyWrite file, .git/config and
// ~/.bashrc so: `srt -c 'echo x > /proc/self/fd/0' < .git/config`). It
// refuses when:
//
//   - the file was opened read-only, the caller may write it, the rules do
//     not let the sandbox write it, and Landlock would not stop the reopen
//     (the file lies beneath one of its write roots, or Landlock is off);
//   - the file was opened write-only, the caller may read it, and the rules
//     hide it.
//
// Descriptors other than *os.File are pipes exec makes: nothing to check.
// The init stage refuses a directory or a socket that leads out (stdio_linux.go).
func (c *Cmd) checkStdioFiles() error {
	for i, f := range []any{c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr} {
		file, ok := f.(*os.File)
		if !ok || file == nil {
			continue
		}
		if err := c.checkStdioFile(i, initstage.StdioNames[i], file); err != nil {
			return err
		}
	}
	for _, p := range c.pass {
		if err := c.checkStdioFile(p.n, initstage.PassName(p.n), p.f); err != nil {
			return err
		}
	}
	return nil
}

// checkStdioFile checks f, the command's descriptor n, called name.
func (c *Cmd) checkStdioFile(n int, name string, f *os.File) error {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil
	}
	link := "/proc/self/fd/" + strconv.Itoa(fd)
	path, err := os.Readlink(link)
	known := err == nil && strings.HasPrefix(path, "/") && !strings.HasSuffix(path, " (deleted)")
	if known {
		// The name must still be this file: a stale name says nothing.
		var now unix.Stat_t
		if unix.Stat(path, &now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
			known = false
		}
	}
	what := name + " is the file " + path
	if !known {
		what = name + " is a file with no name srt can check"
	}
	pipeIn, pipeOut := "(cat FILE | srt …)", "(srt … | tee -a FILE)"
	if n > 2 {
		pipeIn = fmt.Sprintf("(srt --pass-fd %d … %d< <(cat FILE))", n, n)
		pipeOut = fmt.Sprintf("(srt --pass-fd %d … %d> >(tee -a FILE))", n, n)
	}
	if flags&unix.O_PATH != 0 {
		// An O_PATH descriptor grants no access of its own, but the
		// command can open its file through /proc/self/fd/N with all the
		// caller may: reading and writing both must be what the rules
		// give by name (the hostile review of issue 12 read a denyRead
		// file so).
		if err := c.reopenable(n, what, unix.O_RDONLY, pipeIn, pipeOut, link, known, path); err != nil {
			return err
		}
		return c.reopenable(n, what, unix.O_WRONLY, pipeIn, pipeOut, link, known, path)
	}
	return c.reopenable(n, what, flags&unix.O_ACCMODE, pipeIn, pipeOut, link, known, path)
}

// reopenable refuses a file the command holds with access mode (O_RDONLY:
// it could reopen it for writing; O_WRONLY: for reading) when the rules
// deny that by name and nothing else would stop the reopen.
func (c *Cmd) reopenable(n int, what string, mode int, pipeIn, pipeOut, link string, known bool, path string) error {
	if c.ll != nil && known {
		// The Landlock backend has no mount for the descriptor to lead
		// past: its Landlock domain checks every open of a file with a
		// name, a reopen through /proc/self/fd/N included, against the
		// grants the rules made, as it checks the opens by name. (Not
		// one with none: a memfd, a deleted file, which Landlock leaves
		// alone; those are refused below, as under bubblewrap.)
		return nil
	}
	p := c.plan
	switch mode {
	case unix.O_RDONLY:
		if unix.Access(link, unix.W_OK) != nil {
			return nil // the reopen would fail for the caller too
		}
		if known {
			if _, ok := p.Writable(path); ok {
				return nil // the command may write it by name anyway
			}
			if c.landlockWrites() && !beneathAny(path, p.Init.WritePaths) {
				return nil // Landlock refuses the reopen (EACCES)
			}
		}
		return fmt.Errorf("%s, opened read-only, which the sandbox may not write; the command could open it again for writing through /proc/self/fd/%d, past the rules; give it through a pipe instead %s: %w", what, n, pipeIn, ErrStdioFile)
	case unix.O_WRONLY:
		if unix.Access(link, unix.R_OK) != nil {
			return nil
		}
		if known && p.Readable(path) {
			return nil
		}
		return fmt.Errorf("%s, opened for writing only, which the sandbox may not read; the command could open it again for reading through /proc/self/fd/%d, past the rules; let it write to a pipe instead %s: %w", what, n, pipeOut, ErrStdioFile)
	}
	return nil // read-write: the caller gave both
}

// landlockWrites says whether Landlock limits the command's writes.
func (c *Cmd) landlockWrites() bool {
	in := c.plan.Init
	return in.Landlock && !in.LandlockScopeOnly && c.m.kernel.landlockABI > 0
}

// beneathAny says whether path is one of roots or beneath one.
func beneathAny(path string, roots []string) bool {
	for _, r := range roots {
		if fsview.IsWithin(path, r) {
			return true
		}
	}
	return false
}
