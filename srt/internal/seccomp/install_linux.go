package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Install loads prog as a seccomp filter on every thread of the process. It
// first sets no_new_privs on the calling OS thread (required to install a
// filter without CAP_SYS_ADMIN); SECCOMP_FILTER_FLAG_TSYNC then makes the
// kernel attach the filter to, and copy no_new_privs onto, every other thread.
// Threads started later inherit both. A filter cannot be removed.
func Install(prog []unix.SockFilter) error {
	if len(prog) == 0 || len(prog) > maxInsns {
		return fmt.Errorf("seccomp: install: program has %d instructions", len(prog))
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: install filter: %w", errno)
	}
	if tid != 0 {
		// TSYNC reports the first thread it could not synchronize; no thread got the filter.
		return fmt.Errorf("seccomp: install filter: thread %d could not be synchronized", tid)
	}
	return nil
}
