package landlock

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Rules says what stays writable and which scopes to apply.
type Rules struct {
	// WritePaths are absolute directories (writable beneath) or files
	// (writable themselves). Symlinks are followed once, here. Nothing is
	// added implicitly: a command that writes to /dev/null or /dev/tty (as
	// os/exec does for a nil Stdout) needs them listed.
	WritePaths []string
	// ScopeSignals refuses signals to processes outside the domain (ABI 6).
	ScopeSignals bool
	// ScopeAbstractUnix refuses connecting to abstract Unix sockets bound
	// outside the domain (ABI 6).
	ScopeAbstractUnix bool
	// ScopesOnly applies the scopes and leaves the filesystem unhandled:
	// WritePaths are ignored, every write stays allowed, and so do mount
	// changes (Landlock refuses mount(2), umount(2), pivot_root(2) and the
	// new mount API only to a domain that handles filesystem access), which
	// a nested sandbox (bubblewrap) needs. Before ABI 6 there are no scopes:
	// Restrict then restricts nothing, and the ABI it returns says so.
	ScopesOnly bool
	// ThisThread restricts only the calling thread (and what it starts
	// from now on), for a caller that has locked its goroutine to the
	// thread that will start the restricted program: restricting every
	// thread stops the world and signals each of them.
	ThisThread bool
}

// rulesetAttr is struct landlock_ruleset_attr up to the scoped field (ABI 6).
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel
// declares packed: 12 bytes.
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
}

// Restrict applies r to every thread of the process and to everything they
// start from now on. It returns the Landlock ABI it used and the write paths
// it skipped because they do not exist. Scopes are applied only when abi >= 6.
// With r.ScopesOnly and abi < 6 nothing is applied.
// On any error nothing has been restricted, except that no_new_privs may
// already be set.
func Restrict(r Rules) (abi int, skipped []string, err error) {
	abi, err = ABI()
	if err != nil {
		return 0, nil, err
	}
	attr := rulesetAttr{handledFS: handledAccess(abi), scoped: scopes(abi, r)}
	writePaths := r.WritePaths
	if r.ScopesOnly {
		attr.handledFS, writePaths = 0, nil
		if attr.scoped == 0 {
			return abi, nil, nil // an empty ruleset is refused (ENOMSG)
		}
	}
	// A kernel whose struct is shorter accepts ours: the fields it lacks are zero.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return abi, nil, fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, p := range writePaths {
		added, err := allowPath(int(fd), p, abi)
		if err != nil {
			return abi, nil, err
		}
		if !added {
			skipped = append(skipped, p)
		}
	}
	if r.ThisThread {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return abi, nil, fmt.Errorf("landlock: set no_new_privs: %w", err)
		}
		if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
			return abi, nil, fmt.Errorf("landlock: restrict: %w", errno)
		}
		return abi, skipped, nil
	}
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); errno != 0 {
		return abi, nil, fmt.Errorf("landlock: set no_new_privs on every thread: %w%s", errno, cgoHint(errno))
	}
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return abi, nil, fmt.Errorf("landlock: restrict every thread: %w%s", errno, cgoHint(errno))
	}
	return abi, skipped, nil
}

// allowPath grants the write rights beneath path. It reports false, with no
// error, when path does not exist.
func allowPath(rulesetFD int, path string, abi int) (bool, error) {
	if !filepath.IsAbs(path) {
		return false, fmt.Errorf("landlock: write path %q is not absolute", path)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("landlock: open write path %q: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("landlock: stat write path %q: %w", path, err)
	}
	rule := pathBeneathAttr{allowed: handledAccess(abi), parentFD: int32(fd)}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rule.allowed = fileAccess(abi)
	}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return false, fmt.Errorf("landlock: allow writes beneath %q: %w", path, errno)
	}
	return true, nil
}

func cgoHint(errno syscall.Errno) string {
	if errno == unix.ENOTSUP {
		return " (the Go runtime cannot do this in a binary that uses cgo; build with CGO_ENABLED=0)"
	}
	return ""
}
