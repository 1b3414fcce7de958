//go:build linux

package placeholders

import (
	"errors"

	"golang.org/x/sys/unix"
)

// fileID identifies a file: device and inode, and its birth time where the
// filesystem records one, so that an inode number that a removed
// placeholder freed and a new file of the user's reuses is not taken for
// srt's.
type fileID struct {
	Dev, Ino uint64
	Btime    int64 // nanoseconds; 0: unknown
}

func (a fileID) same(b fileID) bool {
	return a.Ino != 0 && a.Dev == b.Dev && a.Ino == b.Ino && (a.Btime == 0 || b.Btime == 0 || a.Btime == b.Btime)
}

// info is what srt looks at in an entry at a placeholder path.
type info struct {
	id   fileID
	mode uint32 // the S_IFMT bits
	uid  uint32
	size int64
}

// statAt describes the entry name of directory dir, not following a
// symlink; statFD describes an open descriptor.
func statAt(dir int, name string) (info, error) { return statx(dir, name, unix.AT_SYMLINK_NOFOLLOW) }
func statFD(fd int) (info, error)               { return statx(fd, "", unix.AT_EMPTY_PATH) }

func statx(dir int, name string, flags int) (info, error) {
	var sx unix.Statx_t
	err := unix.Statx(dir, name, flags|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &sx)
	if err == unix.ENOSYS { // a seccomp profile (an old container's) without statx
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, flags); err != nil {
			return info{}, err
		}
		return info{id: fileID{Dev: st.Dev, Ino: st.Ino}, mode: st.Mode & unix.S_IFMT, uid: st.Uid, size: st.Size}, nil
	}
	if err != nil {
		return info{}, err
	}
	in := info{id: fileID{Dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), Ino: sx.Ino}, mode: uint32(sx.Mode) & unix.S_IFMT, uid: sx.Uid, size: int64(sx.Size)}
	if sx.Mask&unix.STATX_BTIME != 0 {
		in.id.Btime = sx.Btime.Sec*1e9 + int64(sx.Btime.Nsec)
	}
	return in, nil
}

// identity is the identity of the entry at p, not following a final
// symlink.
func identity(p string) (fileID, bool) {
	in, err := statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW)
	return in.id, err == nil
}

// openEntry opens the entry name of directory dir to hold locks on it:
// read-only, not following a symlink, only when it is a regular file or a
// directory (nothing else is a placeholder, and opening a device or a fifo
// could do something), and only when the descriptor is the entry that was
// looked at.
func openEntry(dir int, name string) (int, info, error) {
	at, err := statAt(dir, name)
	if err != nil {
		return -1, info{}, err
	}
	if at.mode != unix.S_IFREG && at.mode != unix.S_IFDIR {
		return -1, info{}, errNotPlaceholder
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, info{}, err
	}
	in, err := statFD(fd)
	if err == nil && !in.id.same(at.id) {
		err = errChanged
	}
	if err != nil {
		unix.Close(fd)
		return -1, info{}, err
	}
	return fd, in, nil
}

var (
	errNotPlaceholder = errors.New("neither a regular file nor a directory")
	errChanged        = errors.New("replaced while srt looked at it")
)

// still says whether name in dir is still the entry of identity id.
func still(dir int, name string, id fileID) bool {
	at, err := statAt(dir, name)
	return err == nil && at.id.same(id)
}
