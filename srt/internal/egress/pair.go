package egress

import (
	"os"
	"syscall"
)

// pair is a connected pair of Unix stream sockets, neither inherited by
// a program srt starts unless passed to it (ExtraFiles).
func pair() (*os.File, *os.File, error) {
	fds, err := socketpair()
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b"), nil
}

// childAttr is how the decider and srt-proxy start: in a process group of
// their own (a terminal's ^C goes to srt, which closes their channels),
// and, where the kernel has it, killed with srt (pdeathsig).
func childAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(a)
	return a
}
