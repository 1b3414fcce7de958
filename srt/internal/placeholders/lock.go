//go:build linux

package placeholders

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/kernrand"
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
//	marker  an open-file-description lock (F_OFD_SETLK), by every run that
//	        made or adopted the placeholder, so srt's. A run finds it with
//	        F_OFD_GETLK, which takes nothing. It decides only who removes
//	        the placeholder in the end.
//
// The marker of a file is a WRITE lock on one byte of a range far beyond
// any content (markerBase, markerSpan), at an offset each run draws at
// random, so that the markers of several runs do not conflict. A write
// lock needs a descriptor open for writing: a process that may only read
// a file of the user's cannot forge the marker on it (and have srt adopt,
// then remove, it); one that may write it can destroy its content anyway
// (it is empty, or holds exactly what srt writes there). Only an OFD write
// lock counts (F_OFD_GETLK reports l_pid -1 for it): a read lock, or a
// POSIX (lockf, fcntl F_SETLK) lock of any kind, is nobody's marker.
//
// A directory cannot be opened for writing, so the marker of a directory
// is an OFD read lock on byte 0, which any process that can read it can
// forge; but srt removes a directory only while it is empty (rmdir), so
// at worst a forged marker has srt remove an empty directory of the
// user's (adopted.go, docs/security.md).
//
// The two are separate because a run holds the use lock on the user's own
// files too (so that no run of another state directory removes, under its
// mount, a placeholder of a dead run that it took for the user's): the use
// lock alone cannot tell a placeholder from the user's file; and a test
// by flock(LOCK_EX|LOCK_NB) would itself hold, for an instant, the lock a
// concurrent run tests, and make it take a file of the user's for a
// placeholder (which it would then remove). flock and OFD locks do not
// interact on Linux.
const (
	markerBase = 1 << 62 // a file marker's range: far past any content
	markerSpan = 1 << 60
	dirMarker  = 0 // the byte of a directory's marker
)

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

// mark takes the marker: fd is a directory, or a file open for writing.
// Each try draws another offset: a draw that another marker holds already
// (another run, or another claim of this one) fails with EAGAIN.
func mark(fd int, dir bool) error {
	if dir {
		lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: dirMarker, Len: 1}
		return unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
	}
	var err error
	for try := 0; try < 8; try++ {
		var b [8]byte
		kernrand.Fill(b[:])
		off := markerBase + int64(binary.LittleEndian.Uint64(b[:])%markerSpan)
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
		if err = unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk); err != unix.EAGAIN && err != unix.EACCES {
			return err
		}
	}
	return err
}

// markedByOther says whether another open file description (another run,
// or another command of this one) holds the marker of the entry fd, a
// directory or a file (fd need not be open for writing: F_OFD_GETLK takes
// nothing). Only OFD locks count (l_pid -1); for a file, only write locks
// in the marker range. F_OFD_GETLK reports one lock at a time, so the
// range is searched past each POSIX write lock in it; one that reaches to
// the end of the file, or a range too crowded to search, counts as no
// marker, which leaves the entry to the user (a later sweep removes a
// placeholder taken so).
func markedByOther(fd int, dir bool) bool {
	if dir {
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: dirMarker, Len: 1}
		return unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk) == nil && lk.Type != unix.F_UNLCK && lk.Pid == -1
	}
	// The query is for a read lock: read locks do not conflict with it, so
	// F_OFD_GETLK reports only write locks, and no read lock hides one.
	const end = markerBase + markerSpan // one past the range
	for start, try := int64(markerBase), 0; start < end && try < 64; try++ {
		lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: start, Len: end - start}
		if unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk) != nil || lk.Type == unix.F_UNLCK {
			return false
		}
		if lk.Type == unix.F_WRLCK && lk.Pid == -1 {
			return true
		}
		next := lk.Start + lk.Len
		if lk.Len == 0 || next <= start {
			return false // a POSIX write lock to the end of any file: nothing past it shows
		}
		start = next
	}
	return false
}
