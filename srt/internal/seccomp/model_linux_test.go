package seccomp

import "golang.org/x/sys/unix"

// This file restates the policy from the brief independently of the rule
// tables, so the interpreter tests compare the compiled program against a
// second reading of the policy rather than against itself.

// modelNums are the syscall numbers the model knows, per architecture,
// transcribed separately from sysnum (arm64 from asm-generic/unistd.h).
var modelNums = map[string]map[string]uint32{
	"amd64": {
		"read": 0, "write": 1, "openat": 257, "execve": 59, "connect": 42, "socketpair": 53,
		"socket": 41, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"unshare": 272, "clone": 56, "clone3": 435, "setns": 308, "mount": 165, "umount2": 166,
		"pivot_root": 155, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
		"fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_tree_attr": 467,
		"fork": 57, "vfork": 58, "exit_group": 231, "ioctl": 16,
		"add_key": 248, "request_key": 249, "keyctl": 250,
		"chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "creat": 85, "open": 2,
		"openat2": 437, "mknod": 133, "mknodat": 259, "mkdir": 83, "fchown": 93,
	},
	"arm64": {
		"read": 63, "write": 64, "openat": 56, "execve": 221, "connect": 203, "socketpair": 199,
		"socket": 198, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"unshare": 97, "clone": 220, "clone3": 435, "setns": 268, "mount": 40, "umount2": 39,
		"pivot_root": 41, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
		"fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_tree_attr": 467,
		"exit_group": 94, "ioctl": 29,
		"add_key": 217, "request_key": 218, "keyctl": 219,
		"fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "openat2": 437, "mknodat": 33,
		"mkdirat": 34, "fchown": 55,
	},
}

var (
	retAllow  = uint32(unix.SECCOMP_RET_ALLOW)
	retEPERM  = uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	retENOSYS = uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
)

// model returns what the program for (a, o) must answer for d.
func model(a Arch, o Options, d seccompData) uint32 {
	if d.arch != a.audit {
		return retENOSYS
	}
	if a.name == "amd64" && d.nr&0x40000000 != 0 {
		return retENOSYS
	}
	name := ""
	for n, nr := range modelNums[a.name] {
		if nr == d.nr {
			name = n
		}
	}
	low0 := uint32(d.args[0]) // the kernel sees only the low word of int arguments
	low1 := uint32(d.args[1]) // ioctl's request is an unsigned int
	low2, low3 := uint32(d.args[2]), uint32(d.args[3])
	if o.BlockUnixSockets {
		switch name {
		case "socket":
			if low0 == 1 || low0 == 40 { // AF_UNIX, AF_VSOCK
				return retEPERM
			}
		case "socketpair":
			// AF_UNIX of any type but SOCK_STREAM (1) and SOCK_SEQPACKET (5),
			// SOCK_CLOEXEC and SOCK_NONBLOCK aside
			if low0 == 1 && low1&0xf != 1 && low1&0xf != 5 {
				return retEPERM
			}
		}
	}
	if !o.BlockUnixSockets && o.SuperviseUnixSockets && name == "socket" && low0 == 40 { // AF_VSOCK alone
		return retEPERM
	}
	if o.BlockUnixSockets || o.SuperviseUnixSockets || o.BlockSetID {
		switch name {
		case "io_uring_setup", "io_uring_enter", "io_uring_register":
			return retEPERM
		}
	}
	if o.BlockNamespaces {
		switch name {
		case "unshare", "clone":
			if low0&(0x10000000|0x00020000) != 0 { // CLONE_NEWUSER|CLONE_NEWNS
				return retEPERM
			}
		case "clone3":
			return retENOSYS
		case "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen",
			"fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr":
			return retEPERM
		}
	}
	if o.BlockTerminalInjection && name == "ioctl" {
		if low1 == 0x5412 || low1 == 0x541C { // TIOCSTI, TIOCLINUX (asm-generic/ioctls.h)
			return retEPERM
		}
	}
	if o.BlockKeyrings {
		switch name {
		case "keyctl", "add_key", "request_key":
			return retEPERM
		}
	}
	if o.BlockSetID {
		const setID = 0o4000 | 0o2000      // S_ISUID | S_ISGID
		const creates = 0o100 | 0o20000000 // O_CREAT | __O_TMPFILE
		switch {
		case (name == "chmod" || name == "fchmod" || name == "creat" || name == "mknod") && low1&setID != 0,
			(name == "fchmodat" || name == "fchmodat2" || name == "mknodat") && low2&setID != 0,
			name == "open" && low1&creates != 0 && low2&setID != 0,
			name == "openat" && low2&creates != 0 && low3&setID != 0:
			return retEPERM
		case name == "openat2":
			return retENOSYS
		}
	}
	return retAllow
}
