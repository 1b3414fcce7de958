//go:build linux

package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks on the terminal srt was started from: TIOCSTI pushes bytes into
// its input queue, which the user's shell reads after the command ends.
func init() {
	register("tiocsti", 0, func([]string) { report("tiocsti", tiocsti(0, 'x')) })
	// A process of a new session of its own tries to make the terminal its
	// controlling terminal (TIOCSCTTY), then runs tiocsti there.
	register("steal-tty", 0, func([]string) {
		report("steal-tty", child(&syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, "tiocsti"))
	})
	register("open-tty", 0, func([]string) {
		fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY, 0)
		if err == nil {
			unix.Close(fd)
		}
		report("open-tty", err)
	})
}

func tiocsti(fd int, c byte) error {
	_, _, errno := syscall.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	if errno != 0 {
		return errno
	}
	return nil
}
