package placeholders

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// The two locks a run takes on the entry at a placeholder path, through a
// descriptor it keeps open for as long as its sandbox may run. Both belong
// to the open file description, so they go with the run's last
// descriptor, at its end or its death, and they are seen by every srt
// process of any state directory: they are the coordination that does not
// depend on TMPDIR (doc.go).
//
//	use     flock(LOCK_SH), by every run that mounts on the path, whether
//	        srt made what is there or not. srt removes a placeholder only
//	        while it holds flock(LOCK_EX) on it, which no one gets while a
//	        run uses it: this is the rule the safety rests on.
//	marker  an open-file-description read lock (F_OFD_SETLK) on byte 0,
//	        by every run that made or adopted the placeholder, so srt's.
//	        A run finds it with F_OFD_GETLK, which takes nothing. It
//	        decides only who removes the placeholder in the end.
//
// The two are separate because a run holds the use lock on the user's own
// files too (so that no run of another state directory removes, under its
// mount, a placeholder of a dead run that it took for the user's): the use
// lock alone cannot tell a placeholder from the user's file; and a test
// by flock(LOCK_EX|LOCK_NB) would itself hold, for an instant, the lock a
// concurrent run tests, and make it take a file of the user's for a
// placeholder (which it would then remove). flock and OFD locks do not
// interact on Linux.
const markerByte = 0

// lockWait bounds how long srt waits for another process's exclusive
// lock on a placeholder. srt takes one only for the instant of a removal;
// a process that keeps one (a command that locked the file itself) stops
// srt rather than have it mount on a path it cannot hold.
const lockWait = 3 * time.Second

// errLockedOut: another process keeps an exclusive lock on the entry.
var errLockedOut = errors.New("another process keeps an exclusive lock (flock) on it, so srt cannot keep other srt runs from removing it under this sandbox; find the process with fuser, or try again")

// useShared takes the use lock.
func useShared(fd int) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			return fmt.Errorf("flock: %w", err)
		case time.Now().After(deadline):
			return errLockedOut
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// useExclusive tries to turn the caller's use lock (or none) into the
// only one: it fails with EWOULDBLOCK while another descriptor holds one.
// A failed conversion drops a shared lock the descriptor had (the kernel
// removes it before it looks for conflicts): the caller is then no holder
// any more, and closes the descriptor.
func useExclusive(fd int) error {
	for {
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != unix.EINTR {
			return err
		}
	}
}

// mark takes the marker.
func mark(fd int) error {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: markerByte, Len: 1}
	return unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
}

// markedByOther says whether another open file description (another run,
// or another command of this one) holds the marker.
func markedByOther(fd int) bool {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: markerByte, Len: 1}
	return unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk) == nil && lk.Type != unix.F_UNLCK
}
