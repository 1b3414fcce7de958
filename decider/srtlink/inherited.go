package srtlink

import "golang.org/x/sys/unix"

// Inherited checks that descriptor fd was open when this program started,
// as every descriptor an option of srt, srt-proxy or the decider names
// must be: it returns EBADF for one that is not open, and for one this
// process opened itself. A number the parent left closed does not stay
// free: the Go runtime opens files before main (the cgroup CPU limit files
// it keeps for the process's life, then its poller), so that "open" alone
// would take the runtime's file for the stream the option names. A
// descriptor inherited across exec has close-on-exec clear, and Go opens
// every one of its own with it set, so the flag tells them apart. Call it
// before the program changes the descriptor's flags.
func Inherited(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		return err
	}
	if flags&unix.FD_CLOEXEC != 0 {
		return unix.EBADF
	}
	return nil
}
