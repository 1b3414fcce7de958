package seccomp

import "golang.org/x/sys/unix"

// A rule refuses one syscall with errno, either always or only when the low 32
// bits of one argument match.
type rule struct {
	syscall string   // key into sysnum
	arg     *argTest // nil: every call
	errno   unix.Errno
}

// argTest matches the low 32 bits of argument index: equal to one of anyOf, or
// sharing a bit with mask. Exactly one of anyOf and mask is set.
type argTest struct {
	index int
	anyOf []uint32
	mask  uint32
}

// unixSocketRules keep the command from reaching listeners outside the
// sandbox through Unix-domain or vsock sockets.
var unixSocketRules = []rule{
	// domain is an int; AF_VSOCK reaches the hypervisor host and other VMs.
	{syscall: "socket", arg: &argTest{index: 0, anyOf: []uint32{unix.AF_UNIX, unix.AF_VSOCK}}, errno: unix.EPERM},
	// io_uring creates sockets without socket(2) (IORING_OP_SOCKET, Linux 5.19).
	{syscall: "io_uring_setup", errno: unix.EPERM},
	{syscall: "io_uring_enter", errno: unix.EPERM},
	{syscall: "io_uring_register", errno: unix.EPERM},
}

// nsFlags are the clone/unshare flags that would let the command remount the
// filesystem: a user namespace gives CAP_SYS_ADMIN, a mount namespace uses it.
const nsFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS

// namespaceRules keep the command from creating or joining namespaces and from
// changing mounts, which would undo bubblewrap's read-only binds and masks.
var namespaceRules = []rule{
	{syscall: "unshare", arg: &argTest{index: 0, mask: nsFlags}, errno: unix.EPERM},
	// flags are arg 0 on x86-64 and arm64 (s390 swaps them); the kernel reads lower_32_bits(flags).
	{syscall: "clone", arg: &argTest{index: 0, mask: nsFlags}, errno: unix.EPERM},
	// clone3's flags live in a struct seccomp cannot read; ENOSYS makes libc and Go fall back to clone.
	{syscall: "clone3", errno: unix.ENOSYS},
	// joins an existing namespace, e.g. the host's through an inherited /proc/<pid>/ns fd.
	{syscall: "setns", errno: unix.EPERM},
	{syscall: "mount", errno: unix.EPERM},
	// unmounting a tmpfs mask or a read-only bind would reveal what lies beneath.
	{syscall: "umount2", errno: unix.EPERM},
	{syscall: "pivot_root", errno: unix.EPERM},
	// The new mount API (Linux 5.2) creates and attaches mounts without mount(2).
	{syscall: "open_tree", errno: unix.EPERM},
	{syscall: "move_mount", errno: unix.EPERM},
	{syscall: "fsopen", errno: unix.EPERM},
	{syscall: "fsconfig", errno: unix.EPERM},
	{syscall: "fsmount", errno: unix.EPERM},
	{syscall: "fspick", errno: unix.EPERM},
	// changes mount flags such as read-only (Linux 5.12).
	{syscall: "mount_setattr", errno: unix.EPERM},
	// open_tree plus mount_setattr in one call (Linux 6.15).
	{syscall: "open_tree_attr", errno: unix.EPERM},
}

// Terminal ioctl requests, from include/uapi/asm-generic/ioctls.h; x86-64 and
// arm64 both use the generic values (alpha, mips, powerpc and sparc do not).
// They are written out, like the syscall numbers, so that the rule does not
// depend on the build architecture's x/sys/unix.
const (
	tiocsti   = 0x5412 // TIOCSTI: "simulate terminal input", push one byte into the input queue
	tioclinux = 0x541C // TIOCLINUX: virtual console subcodes, TIOCL_PASTESEL pastes the selection as input
)

// terminalRules keep the command from typing into a terminal it shares with
// the host. The kernel's ioctl cmd is an unsigned int, so the low 32 bits of
// arg 1 are what it acts on.
var terminalRules = []rule{
	{syscall: "ioctl", arg: &argTest{index: 1, anyOf: []uint32{tiocsti, tioclinux}}, errno: unix.EPERM},
}
