//go:build linux

package placeholders

import "golang.org/x/sys/unix"

// adopt marks, as one of its holders, the entry fd (base in dir, held
// with the use lock) when it carries another run's marker (lock.go). It
// returns the descriptor to hold it by from now on: for a file, a new one
// open for writing, since the marker is a write lock (fd is closed then);
// ok is false, and fd still the holder's, when the entry is not adopted.
//
// The marker of a directory is a read lock, which any process that can
// read the directory can take: a directory adopted so is removed by its
// last holder only if it is empty then (rmdir), so a forged marker can
// have srt remove nothing but an empty directory of the user's. srt does
// not ask more of a directory it adopts (that it is empty, say): another
// run's placeholder directory holds that run's placeholders while they
// are being made, before their markers are on them.
func adopt(dir int, base string, fd int, in info) (int, bool) {
	if in.mode == unix.S_IFDIR {
		return fd, markedByOther(fd, true) && mark(fd, true) == nil
	}
	if !markedByOther(fd, false) {
		return fd, false
	}
	// Whoever took the marker could write the file. srt opens it for
	// writing only once it carries one, so that it does not hold the
	// user's files open for writing (which makes executing them fail,
	// ETXTBSY).
	wfd, err := unix.Openat(dir, base, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fd, false
	}
	if w, err := statFD(wfd); err != nil || !w.id.same(in.id) || useShared(wfd) != nil || mark(wfd, false) != nil {
		unix.Close(wfd) // replaced meanwhile, or not markable: hold it as the user's
		return fd, false
	}
	unix.Close(fd) // wfd holds the use lock now
	return wfd, true
}
