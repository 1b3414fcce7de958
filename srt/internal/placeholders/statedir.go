//go:build linux

package placeholders

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// stateDir is srt's per-user state directory, $TMPDIR/srt-<uid>, held
// open: every entry in it is reached relative to this descriptor, never by
// a path looked up again, so that nothing planted on the way (a symlink
// for the directory or for an entry) can redirect what srt reads, writes
// or removes.
type stateDir struct {
	path string
	fd   int
}

// statePath is where the state directory is: $TMPDIR (its real path) and
// srt-<uid>.
func statePath() (string, error) {
	base, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", fmt.Errorf("temporary directory %s: %w", os.TempDir(), err)
	}
	return filepath.Join(base, "srt-"+strconv.Itoa(os.Getuid())), nil
}

// openState opens the state directory, creating it (mode 0700) when create
// is set. It refuses anything but a directory of the caller's own with no
// access for others: a symlink is not followed, and a directory someone
// else made could hold their journals.
func openState(create bool) (*stateDir, error) {
	p, err := statePath()
	if err != nil {
		return nil, err
	}
	if create {
		if err := unix.Mkdir(p, 0o700); err != nil && err != unix.EEXIST {
			return nil, fmt.Errorf("state directory %s: %w; set TMPDIR to a directory of your own", p, err)
		}
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return nil, untrustedState(p)
		}
		return nil, fmt.Errorf("state directory %s: %w; set TMPDIR to a directory of your own", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		unix.Close(fd)
		return nil, untrustedState(p)
	}
	return &stateDir{path: p, fd: fd}, nil
}

func untrustedState(p string) error {
	return fmt.Errorf("state directory %s is not a directory owned by uid %d with mode 0700; remove it, or set TMPDIR to a directory of your own", p, os.Getuid())
}

func (d *stateDir) close() { unix.Close(d.fd) }

// StateDir returns srt's per-user state directory, $TMPDIR/srt-<uid>,
// creating it. srt makes it before every sandbox it plans, so that a
// command which may write $TMPDIR cannot make it first, and the plan keeps
// it read-only in every sandbox (plan.Input.StateDir).
func StateDir() (string, error) {
	d, err := openState(true)
	if err != nil {
		return "", err
	}
	d.close()
	return d.path, nil
}

// names lists the directory's entries.
func (d *stateDir) names() ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// lstat describes an entry without following it.
func (d *stateDir) lstat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// ours says whether st is an entry of type typ owned by the caller: the
// only kind srt trusts.
func ours(st unix.Stat_t, typ uint32) bool {
	return st.Mode&unix.S_IFMT == typ && int(st.Uid) == os.Getuid()
}

// readFile reads a regular file of the caller's, at most limit bytes;
// anything else (a symlink, a fifo, someone else's file) is refused.
func (d *stateDir) readFile(name string, limit int64) ([]byte, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if !ours(st, unix.S_IFREG) || st.Size > limit {
		return nil, errUntrustedEntry
	}
	buf := make([]byte, st.Size)
	n, err := f.ReadAt(buf, 0)
	if int64(n) != st.Size {
		return nil, err
	}
	return buf, nil
}

var errUntrustedEntry = errors.New("not a regular file of this user's")

// writeFile replaces name with data, atomically: a fresh temporary file
// (O_EXCL, never a planted one) renamed over it.
func (d *stateDir) writeFile(name string, data []byte) error {
	tmp := name + ".tmp"
	unix.Unlinkat(d.fd, tmp, 0) // a torn write's leftover; never followed
	fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(d.fd, tmp, d.fd, name)
	}
	if err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
	}
	return err
}

// remove removes an entry that is not a directory (a symlink is removed,
// never followed).
func (d *stateDir) remove(name string) error {
	return unix.Unlinkat(d.fd, name, 0)
}

// HaveJournals says whether srt's state directory holds journals or run
// directories: only then can there be placeholders or run directories of
// killed runs to collect. It is one directory read, cheap enough for every
// start.
func HaveJournals() bool {
	d, err := openState(false)
	if err != nil {
		return false
	}
	defer d.close()
	names, _ := d.names()
	for _, n := range names {
		if strings.HasPrefix(n, "run-") || strings.HasPrefix(n, runDirPrefix) {
			return true
		}
	}
	return false
}
