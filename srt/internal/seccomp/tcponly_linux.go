package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sockets a sandbox without a network namespace (the Landlock backend)
// may make: Landlock's network rules cover TCP alone, so every other
// socket that reaches a network is refused here. Each table holds one rule
// on socket(2), and a program holds one rule per system call: the tables
// are separate programs, stacked (the kernel applies every filter, and the
// strictest answer wins).
var tcpOnlyTables = [][]rule{
	// Families: Unix sockets (filter 1 decides them), IP and netlink (whose
	// route queries getaddrinfo and ip make; changes need CAP_NET_ADMIN).
	// Packet, vsock, Bluetooth, CAN, ... are refused, and so is any family
	// a later kernel adds.
	{{syscall: "socket", args: []argTest{{index: 0, noneOf: []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}}}, errno: unix.EPERM}},
	// IP sockets are streams: no UDP (DNS, QUIC, a datagram to anywhere),
	// no ICMP, no raw and no SCTP seqpacket.
	{{syscall: "socket", args: []argTest{
		{index: 0, anyOf: []uint32{unix.AF_INET, unix.AF_INET6}},
		{index: 1, bits: sockTypeMask, noneOf: []uint32{unix.SOCK_STREAM}},
	}, errno: unix.EPERM}},
	// ... of TCP: protocol 0 or IPPROTO_TCP; MPTCP and SCTP streams are
	// refused, which Landlock's TCP rules may not cover.
	{{syscall: "socket", args: []argTest{
		{index: 0, anyOf: []uint32{unix.AF_INET, unix.AF_INET6}},
		{index: 2, noneOf: []uint32{0, unix.IPPROTO_TCP}},
	}, errno: unix.EPERM}},
	// TCP Fast Open: sendto, sendmsg and sendmmsg with MSG_FASTOPEN
	// connect an unconnected socket to the address they carry without
	// the LSM hook Landlock's connect rule is (security_socket_connect,
	// which tcp_sendmsg's Fast Open path does not call). EOPNOTSUPP is
	// what a kernel without Fast Open answers, and programs that try it
	// (curl --tcp-fastopen) then connect(2), which the rules check.
	// TCP_FASTOPEN_CONNECT (a socket option) is left: its connect(2)
	// goes through the hook.
	{
		{syscall: "sendto", args: []argTest{{index: 3, mask: unix.MSG_FASTOPEN}}, errno: unix.EOPNOTSUPP},
		{syscall: "sendmsg", args: []argTest{{index: 2, mask: unix.MSG_FASTOPEN}}, errno: unix.EOPNOTSUPP},
		{syscall: "sendmmsg", args: []argTest{{index: 3, mask: unix.MSG_FASTOPEN}}, errno: unix.EOPNOTSUPP},
	},
	// A file's inode flags (chattr: nodump, noatime, sync, ...; the
	// extended ones, the project id), its generation and fs-verity are
	// changed through a descriptor open for reading alone, which no
	// Landlock right covers: a write-protected file (a hook, .bashrc)
	// would take them. The ioctls and file_setattr(2) (Linux 6.17) are
	// refused wherever the file lies (bubblewrap's read-only mounts
	// refuse them outside the write roots only); ENOSYS for
	// file_setattr, what a kernel before it answers.
	{
		{syscall: "ioctl", args: []argTest{{index: 1, anyOf: inodeIoctls}}, errno: unix.EPERM},
		{syscall: "file_setattr", errno: unix.ENOSYS},
	},
	// System V IPC and POSIX message queues: without an IPC namespace
	// they are the host's (another process's shared memory, semaphores,
	// queues). Every call that names an object is refused, so that an id
	// guessed without *get(2) reaches nothing either.
	{
		{syscall: "shmget", errno: unix.EPERM}, {syscall: "shmat", errno: unix.EPERM}, {syscall: "shmctl", errno: unix.EPERM},
		{syscall: "semget", errno: unix.EPERM}, {syscall: "semop", errno: unix.EPERM}, {syscall: "semctl", errno: unix.EPERM}, {syscall: "semtimedop", errno: unix.EPERM},
		{syscall: "msgget", errno: unix.EPERM}, {syscall: "msgsnd", errno: unix.EPERM}, {syscall: "msgrcv", errno: unix.EPERM}, {syscall: "msgctl", errno: unix.EPERM},
		{syscall: "mq_open", errno: unix.EPERM}, {syscall: "mq_timedsend", errno: unix.EPERM}, {syscall: "mq_timedreceive", errno: unix.EPERM}, {syscall: "mq_notify", errno: unix.EPERM},
	},
}

// inodeIoctls change a file's inode flags, generation or fs-verity:
// FS_IOC_SETFLAGS and FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR,
// FS_IOC_SETVERSION and FS_IOC32_SETVERSION, FS_IOC_ENABLE_VERITY; and
// ext4's own name of the generation's, EXT4_IOC_SETVERSION
// (_IOW('f', 4, long): ext4_ioctl takes it as FS_IOC_SETVERSION) and
// EXT4_IOC32_SETVERSION.
//
// Also a directory's encryption policy (FS_IOC_SET_ENCRYPTION_POLICY: an
// empty protected directory made unreadable to whoever lacks the key) and
// a btrfs subvolume's read-only flag (BTRFS_IOC_SUBVOL_SETFLAGS).
var inodeIoctls = []uint32{0x40086602, 0x40046602, 0x401c5820, 0x40087602, 0x40047602, 0x40806685, 0x40086604, 0x40046604,
	0x800c6613, 0x4008941a}

// BuildTCPOnly returns the programs that leave a sandbox without a network
// namespace only TCP among its network sockets; install each (Install).
// io_uring, which makes sockets no filter sees, is refused by Build's
// programs whenever a socket rule applies (Options.BlockUnixSockets or
// SuperviseUnixSockets or BlockSetID: srt always sets BlockSetID).
func BuildTCPOnly(a Arch) ([][]unix.SockFilter, error) {
	if a.audit == 0 {
		return nil, fmt.Errorf("seccomp: build: unsupported architecture")
	}
	var progs [][]unix.SockFilter
	for _, t := range tcpOnlyTables {
		p, err := compile(a, t)
		if err != nil {
			return nil, fmt.Errorf("seccomp: build %s: %w", a, err)
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// BuildProtectPID returns a program that keeps a sandbox without a PID
// namespace from signalling its init stage, process pid, which it could
// otherwise reach (the init stage's thread that starts the command shares
// the command's Landlock domain, so the signal scope lets the signal
// through), and from kill(-1), which would signal it among every process
// of the user the scope lets through: a killed init stage leaves the
// command's processes to nobody.
func BuildProtectPID(a Arch, pid int) ([]unix.SockFilter, error) {
	if a.audit == 0 {
		return nil, fmt.Errorf("seccomp: build: unsupported architecture")
	}
	p, neg := uint32(pid), uint32(-pid)
	rules := []rule{
		{syscall: "kill", args: []argTest{{index: 0, anyOf: []uint32{p, neg, ^uint32(0)}}}, errno: unix.EPERM},
		{syscall: "tkill", args: []argTest{{index: 0, anyOf: []uint32{p}}}, errno: unix.EPERM},
		{syscall: "tgkill", args: []argTest{{index: 0, anyOf: []uint32{p}}}, errno: unix.EPERM},
		{syscall: "rt_sigqueueinfo", args: []argTest{{index: 0, anyOf: []uint32{p, neg, ^uint32(0)}}}, errno: unix.EPERM},
		{syscall: "rt_tgsigqueueinfo", args: []argTest{{index: 0, anyOf: []uint32{p}}}, errno: unix.EPERM},
		{syscall: "pidfd_open", args: []argTest{{index: 0, anyOf: []uint32{p}}}, errno: unix.EPERM},
	}
	prog, err := compile(a, rules)
	if err != nil {
		return nil, fmt.Errorf("seccomp: build %s: %w", a, err)
	}
	return prog, nil
}

// InstallThisThread installs prog on the calling thread alone (no
// SECCOMP_FILTER_FLAG_TSYNC): what it starts inherits it, the process's
// other threads do not. The caller has locked its goroutine to the
// thread and set no_new_privs.
func InstallThisThread(prog []unix.SockFilter) error {
	if len(prog) == 0 || len(prog) > maxInsns {
		return fmt.Errorf("seccomp: install: program has %d instructions", len(prog))
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: install filter: %w", errno)
	}
	return nil
}
