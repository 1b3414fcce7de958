package seccomp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KernelHasFilters reports whether the running kernel installs seccomp
// filters whose rules answer with an errno (CONFIG_SECCOMP_FILTER, Linux
// 4.14+ for the question itself), without installing anything: srt asks on
// the host before a sandbox starts, and the init stage, on the same kernel,
// then installs its program.
func KernelHasFilters() error {
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	if errno != 0 {
		return fmt.Errorf("seccomp: this kernel installs no filters (SECCOMP_GET_ACTION_AVAIL: %w); it needs CONFIG_SECCOMP_FILTER", errno)
	}
	return nil
}
