package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// cloexecSocket is a TCP socket no program srt starts inherits: macOS has
// no SOCK_CLOEXEC, so it is marked right after, under syscall.ForkLock.
func cloexecSocket(family int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	return fd, err
}

// insideLandlockSrt: macOS has no Landlock backend to be inside of.
func insideLandlockSrt() bool { return false }
