package seccomp

import "golang.org/x/sys/unix"

// A rule refuses one syscall with errno, either always or only when every
// argument test matches.
type rule struct {
	syscall string    // key into sysnum
	args    []argTest // all must match; none: every call
	errno   unix.Errno
}

// argTest matches the low 32 bits of argument index. Exactly one of anyOf,
// noneOf and mask is set:
//
//   - anyOf: the word (kept to bits, when bits is set) equals one of anyOf;
//   - noneOf: the word (kept to bits, when bits is set) equals none of noneOf,
//     an allow-list: a value the kernel may one day add is refused;
//   - mask: the word shares a bit with mask.
type argTest struct {
	index  int
	bits   uint32
	anyOf  []uint32
	noneOf []uint32
	mask   uint32
}

// sockTypeMask keeps the socket type of socket(2)'s and socketpair(2)'s type
// argument, without SOCK_CLOEXEC and SOCK_NONBLOCK (SOCK_TYPE_MASK in
// include/linux/net.h).
const sockTypeMask = 0xf

// unixSocketRules keep the command from reaching listeners outside the
// sandbox through Unix-domain or vsock sockets.
var unixSocketRules = []rule{
	// domain is an int; AF_VSOCK reaches the hypervisor host and other VMs.
	{syscall: "socket", args: []argTest{{index: 0, anyOf: []uint32{unix.AF_UNIX, unix.AF_VSOCK}}}, errno: unix.EPERM},
	// A datagram socket from a pair still sends to any path with sendto(2)
	// (syslog, journald, notify sockets); SOCK_RAW is a datagram socket for
	// AF_UNIX. Stream and seqpacket pairs ignore a destination address
	// (EISCONN, or the address is dropped), and libuv, Node and Python use them.
	{syscall: "socketpair", args: []argTest{
		{index: 0, anyOf: []uint32{unix.AF_UNIX}},
		{index: 1, bits: sockTypeMask, noneOf: []uint32{unix.SOCK_STREAM, unix.SOCK_SEQPACKET}},
	}, errno: unix.EPERM},
}

// vsockRules are what is left of unixSocketRules when Unix sockets are
// supervised rather than refused (Options.SuperviseUnixSockets): a vsock
// socket reaches the hypervisor, which no supervisor vets.
var vsockRules = []rule{
	{syscall: "socket", args: []argTest{{index: 0, anyOf: []uint32{unix.AF_VSOCK}}}, errno: unix.EPERM},
}

// ioUringRules refuse io_uring, which makes sockets (IORING_OP_SOCKET, Linux
// 5.19) and opens files with a mode (IORING_OP_OPENAT) in the kernel, where
// no seccomp rule sees the arguments. Build adds them to every program with
// a rule on those arguments (unix sockets, set-id files).
var ioUringRules = []rule{
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
	{syscall: "unshare", args: []argTest{{index: 0, mask: nsFlags}}, errno: unix.EPERM},
	// flags are arg 0 on x86-64 and arm64 (s390 swaps them); the kernel reads lower_32_bits(flags).
	{syscall: "clone", args: []argTest{{index: 0, mask: nsFlags}}, errno: unix.EPERM},
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
	{syscall: "ioctl", args: []argTest{{index: 1, anyOf: []uint32{tiocsti, tioclinux}}}, errno: unix.EPERM},
}

// keyringRules keep the command away from the kernel's keyrings, which are
// not files that a mount could hide: the caller's user keyring (@u, found by
// uid) holds Kerberos KEYRING: caches, systemd's cached passphrases and
// ecryptfs keys, and a process may link it into its own session keyring and
// read every key. Docker's and Podman's default profiles refuse the same three.
var keyringRules = []rule{
	{syscall: "keyctl", errno: unix.EPERM},
	{syscall: "add_key", errno: unix.EPERM},
	{syscall: "request_key", errno: unix.EPERM},
}

// Mode bits and open flags the set-id rules test, from include/uapi/linux/stat.h
// and include/uapi/asm-generic/fcntl.h (x86-64 and arm64 use the generic
// O_CREAT and __O_TMPFILE).
const (
	setIDBits = 0o6000     // S_ISUID | S_ISGID
	oCreat    = 0o100      // O_CREAT
	oTmpfile  = 0o20000000 // __O_TMPFILE, the bit of O_TMPFILE that means "create"
)

// setIDRules keep the command from making a set-user-ID or set-group-ID file.
// The sandbox's no_new_privs holds only inside: on the host, a setuid file
// the command leaves in a writable directory runs as its owner for whoever
// starts it, and for a command run by root that owner is the host's root.
// The mode is the argument tested; umask never clears these bits.
var setIDRules = []rule{
	{syscall: "chmod", args: []argTest{{index: 1, mask: setIDBits}}, errno: unix.EPERM},
	{syscall: "fchmod", args: []argTest{{index: 1, mask: setIDBits}}, errno: unix.EPERM},
	{syscall: "fchmodat", args: []argTest{{index: 2, mask: setIDBits}}, errno: unix.EPERM},
	// fchmodat with flags (Linux 6.6).
	{syscall: "fchmodat2", args: []argTest{{index: 2, mask: setIDBits}}, errno: unix.EPERM},
	{syscall: "creat", args: []argTest{{index: 1, mask: setIDBits}}, errno: unix.EPERM},
	// The mode is read only when the flags create a file; otherwise it is
	// whatever the register holds, so both are tested.
	{syscall: "open", args: []argTest{{index: 1, mask: oCreat | oTmpfile}, {index: 2, mask: setIDBits}}, errno: unix.EPERM},
	{syscall: "openat", args: []argTest{{index: 2, mask: oCreat | oTmpfile}, {index: 3, mask: setIDBits}}, errno: unix.EPERM},
	// openat2's mode lives in a struct seccomp cannot read; ENOSYS makes
	// callers fall back to openat, where it is checked.
	{syscall: "openat2", errno: unix.ENOSYS},
	// mknod makes regular files too (S_IFREG), with the mode given.
	{syscall: "mknod", args: []argTest{{index: 1, mask: setIDBits}}, errno: unix.EPERM},
	{syscall: "mknodat", args: []argTest{{index: 2, mask: setIDBits}}, errno: unix.EPERM},
}
