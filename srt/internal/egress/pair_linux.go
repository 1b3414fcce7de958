package egress

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func socketpair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// setPdeathsig has the kernel kill the child when srt's thread that
// started it ends: srt killed with SIGKILL leaves nothing behind even
// before the child reads the end of its channel.
func setPdeathsig(a *syscall.SysProcAttr) {
	if pdeathsig {
		a.Pdeathsig = syscall.SIGKILL
	}
}

// pdeathsig is false only in TestChildrenEndWithSrt's helper, which
// checks that the children end without it, as they must on macOS.
var pdeathsig = true
