package landlock

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is wrapped by errors from ABI and Restrict when the running
// kernel has no Landlock: not built in (ENOSYS) or not enabled at boot
// (EOPNOTSUPP).
var ErrUnsupported = errors.New("not supported by the running kernel")

// ABI returns the Landlock ABI version of the running kernel (1 for Linux
// 5.13; each later version adds rights or features).
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return int(v), nil
	case unix.ENOSYS, unix.EOPNOTSUPP:
		return 0, fmt.Errorf("landlock: abi version: %w: %w", ErrUnsupported, errno)
	}
	return 0, fmt.Errorf("landlock: abi version: %w", errno)
}
