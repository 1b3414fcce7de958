package landlock

import "golang.org/x/sys/unix"

// writeRights lists every write-related filesystem right, the first ABI that
// knows it, and whether it applies to a file (the others only to directories).
var writeRights = []struct {
	right uint64
	abi   int
	file  bool
}{
	{unix.LANDLOCK_ACCESS_FS_WRITE_FILE, 1, true},
	{unix.LANDLOCK_ACCESS_FS_REMOVE_DIR, 1, false},
	{unix.LANDLOCK_ACCESS_FS_REMOVE_FILE, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_CHAR, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_DIR, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_REG, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_SOCK, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_FIFO, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK, 1, false},
	{unix.LANDLOCK_ACCESS_FS_MAKE_SYM, 1, false},
	// rename/link into another directory; handled, it needs the grant at both ends.
	{unix.LANDLOCK_ACCESS_FS_REFER, 2, false},
	// truncate(2), ftruncate(2) and O_TRUNC, which WRITE_FILE does not cover.
	{unix.LANDLOCK_ACCESS_FS_TRUNCATE, 3, true},
	// ioctl(2) on devices opened after Restrict; put /dev/tty in WritePaths for terminal ioctls.
	{unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 5, true},
}

// scopeABI is the first ABI with LANDLOCK_SCOPE_SIGNAL and
// LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET.
const scopeABI = 6

// handledAccess is every write right ABI abi knows.
func handledAccess(abi int) uint64 {
	var access uint64
	for _, r := range writeRights {
		if r.abi <= abi {
			access |= r.right
		}
	}
	return access
}

// fileAccess is the part of handledAccess that can be granted on a file.
func fileAccess(abi int) uint64 {
	var access uint64
	for _, r := range writeRights {
		if r.abi <= abi && r.file {
			access |= r.right
		}
	}
	return access
}

// scopes is the scope mask for r, empty before scopeABI.
func scopes(abi int, r Rules) uint64 {
	var s uint64
	if abi < scopeABI {
		return 0
	}
	if r.ScopeSignals {
		s |= unix.LANDLOCK_SCOPE_SIGNAL
	}
	if r.ScopeAbstractUnix {
		s |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	return s
}
