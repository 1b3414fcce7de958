package seccomp

import "golang.org/x/sys/unix"

// nativeSysnum is x/sys/unix's numbering for the build architecture, a third
// source for the numbers in sysnum.
var nativeSysnum = map[string]uint32{
	"socket":            unix.SYS_SOCKET,
	"kill":              unix.SYS_KILL,
	"tkill":             unix.SYS_TKILL,
	"tgkill":            unix.SYS_TGKILL,
	"rt_sigqueueinfo":   unix.SYS_RT_SIGQUEUEINFO,
	"rt_tgsigqueueinfo": unix.SYS_RT_TGSIGQUEUEINFO,
	"pidfd_open":        unix.SYS_PIDFD_OPEN, "shmget": unix.SYS_SHMGET, "shmat": unix.SYS_SHMAT, "shmctl": unix.SYS_SHMCTL, "semget": unix.SYS_SEMGET, "semop": unix.SYS_SEMOP, "semctl": unix.SYS_SEMCTL, "semtimedop": unix.SYS_SEMTIMEDOP, "msgget": unix.SYS_MSGGET, "msgsnd": unix.SYS_MSGSND, "msgrcv": unix.SYS_MSGRCV, "msgctl": unix.SYS_MSGCTL, "mq_open": unix.SYS_MQ_OPEN, "mq_timedsend": unix.SYS_MQ_TIMEDSEND, "mq_timedreceive": unix.SYS_MQ_TIMEDRECEIVE, "mq_notify": unix.SYS_MQ_NOTIFY, "connect": unix.SYS_CONNECT, "listen": unix.SYS_LISTEN, "sendto": unix.SYS_SENDTO, "sendmsg": unix.SYS_SENDMSG, "sendmmsg": unix.SYS_SENDMMSG, "io_uring_setup": unix.SYS_IO_URING_SETUP,
	"io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
	"unshare": unix.SYS_UNSHARE, "clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3,
	"setns": unix.SYS_SETNS, "mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2,
	"pivot_root": unix.SYS_PIVOT_ROOT, "open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT,
	"fsopen": unix.SYS_FSOPEN, "fsconfig": unix.SYS_FSCONFIG, "fsmount": unix.SYS_FSMOUNT,
	"fspick": unix.SYS_FSPICK, "mount_setattr": unix.SYS_MOUNT_SETATTR, "open_tree_attr": unix.SYS_OPEN_TREE_ATTR,
	"ioctl": unix.SYS_IOCTL, "socketpair": unix.SYS_SOCKETPAIR,
	"add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "keyctl": unix.SYS_KEYCTL,
	"fchmod": unix.SYS_FCHMOD, "fchmodat": unix.SYS_FCHMODAT, "fchmodat2": unix.SYS_FCHMODAT2,
	"openat": unix.SYS_OPENAT, "openat2": unix.SYS_OPENAT2, "mknodat": unix.SYS_MKNODAT,
	// chmod, creat, open and mknod do not exist on arm64
	"chmod": absent, "creat": absent, "open": absent, "mknod": absent,
	// the observer's
	"mkdirat": unix.SYS_MKDIRAT, "unlinkat": unix.SYS_UNLINKAT, "renameat": unix.SYS_RENAMEAT, "renameat2": unix.SYS_RENAMEAT2,
	"linkat": unix.SYS_LINKAT, "symlinkat": unix.SYS_SYMLINKAT, "truncate": unix.SYS_TRUNCATE, "fchownat": unix.SYS_FCHOWNAT,
	"utimensat": unix.SYS_UTIMENSAT, "setxattr": unix.SYS_SETXATTR, "lsetxattr": unix.SYS_LSETXATTR,
	"removexattr": unix.SYS_REMOVEXATTR, "lremovexattr": unix.SYS_LREMOVEXATTR,
	"setxattrat": unix.SYS_SETXATTRAT, "removexattrat": unix.SYS_REMOVEXATTRAT,
	"fchown": unix.SYS_FCHOWN, "fsetxattr": unix.SYS_FSETXATTR, "fremovexattr": unix.SYS_FREMOVEXATTR,
	"faccessat": unix.SYS_FACCESSAT, "faccessat2": unix.SYS_FACCESSAT2, "file_setattr": unix.SYS_FILE_SETATTR,
	// nor these
	"mkdir": absent, "unlink": absent, "rmdir": absent, "rename": absent, "link": absent, "symlink": absent,
	"chown": absent, "lchown": absent, "utime": absent, "utimes": absent, "futimesat": absent,
}
