//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/plan"
)

// openGrants opens every grant of the plan (plan.Mount.Grant) for
// bubblewrap's --bind-fd: without following a symlink at any component,
// and checked to be the very file plan.Build looked at. A concurrent
// sandbox that swapped a granted directory for a symlink (rename(2) with
// RENAME_EXCHANGE) after Build gets an error here, not a grant elsewhere;
// one that swaps it after this open changes nothing, since bubblewrap binds
// the descriptor's file and checks the mount against it.
func openGrants(p *plan.Plan) ([]*os.File, error) {
	var out []*os.File
	for _, m := range p.Grants() {
		f, err := openGrant(m)
		if err != nil {
			for _, g := range out {
				g.Close()
			}
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func openGrant(m plan.Mount) (*os.File, error) {
	fail := func(what string) error {
		return fmt.Errorf("sandbox: %s (%s) %s between the check and the mount; something is replacing it while the sandbox starts, and srt runs nothing: %w", m.Path, m.Why, what, plan.ErrPathChanged)
	}
	fd, err := openNoFollow(m.Path)
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return nil, fail("became a symlink")
	case err != nil:
		return nil, fail(fmt.Sprintf("could no longer be opened (%v)", err))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fail(fmt.Sprintf("could not be examined (%v)", err))
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK || uint64(st.Dev) != m.ID.Dev || st.Ino != m.ID.Ino {
		unix.Close(fd)
		return nil, fail("was replaced by another file")
	}
	return os.NewFile(uintptr(fd), m.Path), nil
}

// openNoFollow opens the absolute path p with O_PATH, failing (ELOOP or
// ENOTDIR) if any of its components is a symlink.
func openNoFollow(p string) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
	if !errors.Is(err, unix.ENOSYS) {
		return fd, err
	}
	return openNoFollowWalk(p)
}

// openNoFollowWalk is openNoFollow before Linux 5.6 (no openat2): one
// component at a time, each opened without following a symlink (a
// directory that is now a symlink fails with ENOTDIR; a last component that
// is one opens the link itself, which openGrant's identity check refuses).
func openNoFollowWalk(p string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, err
	}
	names := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, name := range names {
		if name == "" {
			continue
		}
		flags := unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW
		if i < len(names)-1 {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, flags, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
