//go:build !linux

package egress

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketpair has no SOCK_CLOEXEC here (macOS): the descriptors are marked
// close-on-exec right after, under syscall.ForkLock, so that no program
// started meanwhile inherits them.
func socketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}

// setPdeathsig: no such signal here. The decider and srt-proxy end when
// their channel from srt reads end-of-file, which srt's death closes
// (TestChildrenEndWithSrt checks that on Linux, without the signal).
func setPdeathsig(*syscall.SysProcAttr) {}
