package sandbox

import "golang.org/x/sys/unix"

// cloexecSocket is a TCP socket no program srt starts inherits.
func cloexecSocket(family int) (int, error) {
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}
