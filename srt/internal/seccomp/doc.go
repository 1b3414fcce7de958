// Package seccomp builds and installs the classic-BPF seccomp filter that srt
// applies inside the sandbox, just before it execs the user's command.
//
// What it defends against. bubblewrap's mounts are the sandbox's write and read
// barrier, and the network namespace plus the proxy are its network barrier.
// Two families of system calls could undo them from inside, and three more
// reach past them, to the terminal the command was started from, to the
// kernel's keyrings, and to the host's privileges through set-id files:
//
//   - Unix and vsock sockets (Options.BlockUnixSockets): a socket(AF_UNIX)
//     connect to a daemon listening outside (docker.sock, the session bus,
//     ssh-agent) reaches a process that is not sandboxed; AF_VSOCK reaches the
//     hypervisor. socketpair(AF_UNIX) of any type but SOCK_STREAM and
//     SOCK_SEQPACKET is refused too: a datagram socket from a pair sends to
//     any path with sendto(2) (syslog, journald, notify sockets), where a
//     stream or seqpacket one cannot (EISCONN, or the address is ignored).
//   - io_uring (with either of the options above or BlockSetID): it makes
//     sockets and opens files in the kernel, where no rule sees the
//     arguments, so it is refused whole.
//   - Namespaces and mounts (Options.BlockNamespaces): a new user namespace
//     hands the command CAP_SYS_ADMIN over a new mount namespace, where it can
//     bind-mount over or unmount the read-only binds and tmpfs masks. unshare
//     and clone with CLONE_NEWUSER or CLONE_NEWNS, setns, mount, umount2,
//     pivot_root and the whole new mount API are refused with EPERM. clone3
//     passes its flags in memory that seccomp cannot read, so it fails with
//     ENOSYS, which glibc and Go treat as "use clone instead", where the flags
//     are checked.
//   - Terminal input injection (Options.BlockTerminalInjection; srt always
//     sets it): ioctl(fd, TIOCSTI, &c) pushes c into a terminal's input
//     queue, so whoever reads that terminal next (the user's shell, once the
//     command exits) reads it as typed input and runs it outside the sandbox.
//     This is CVE-2017-5226 in bubblewrap's history, and Linux 6.2 added the
//     dev.tty.legacy_tiocsti sysctl because of it; many kernels still leave
//     it at 1. bubblewrap's --new-session is not enough on its own: it only
//     takes the controlling terminal away, and when the command's stdin is a
//     pseudo-terminal that is nobody's controlling terminal, the command can
//     fork, setsid() and adopt it with ioctl(TIOCSCTTY), after which the
//     kernel accepts TIOCSTI from it. TIOCLINUX is refused as well: on a
//     virtual console its TIOCL_PASTESEL subcode pastes the selection as
//     input. Other ioctls, TIOCSCTTY and TCGETS among them, stay allowed.
//   - Keyrings (Options.BlockKeyrings; srt always sets it): keyctl, add_key
//     and request_key fail with EPERM, as in Docker's default profile. The
//     caller's user keyring is found by uid, not inherited, so a new session
//     keyring does not hide it: the command could link it into its own and
//     read every key (Kerberos KEYRING: caches, cached passphrases).
//   - Set-id files (Options.BlockSetID; srt always sets it): chmod, fchmod,
//     fchmodat, fchmodat2, creat, open, openat, mknod and mknodat with
//     S_ISUID or S_ISGID in the mode fail with EPERM (open and openat only
//     when the flags create a file, since the mode is garbage otherwise);
//     openat2, whose mode is in a struct, fails with ENOSYS so callers fall
//     back to openat. no_new_privs holds only inside the sandbox: a
//     setuid-root file a root-run command left in a writable directory would
//     make any local user root.
//
// Rules are data: one table per concern (rules_linux.go), compiled by Build into
// a straight-line program that golden tests pin for every architecture and
// option combination.
//
// Argument words. Every argument compared (socket's domain and type, unshare's
// and clone's flags, ioctl's request, modes and open flags) is read as the low
// 32 bits of the argument:
// the kernel truncates int arguments, reads lower_32_bits(flags) for clone and
// takes ioctl's cmd as an unsigned int, so a 64-bit compare could be dodged by
// setting high bits. Both supported architectures are little-endian, so the
// low word of args[i] sits at offset 16+8*i of struct seccomp_data.
//
// Foreign ABIs. The program first checks seccomp_data.arch against the native
// AUDIT_ARCH value. A call made through another ABI (i386 via int 0x80 on
// x86-64, AArch32 compat on arm64) would be looked up in a different syscall
// table, where socket, unshare, mount and ioctl have other numbers — or, for i386,
// socketcall(2) multiplexes every socket operation — so allowing them would skip
// every rule. Such calls, and x32 calls on x86-64 (nr & 0x40000000, same arch
// value), therefore fail closed: they return ENOSYS without running. ENOSYS was
// preferred to SECCOMP_RET_KILL_PROCESS because it is exactly what a kernel
// built without the compat ABI answers, so probing code (libc, JITs, tools that
// test for 32-bit support) takes its normal "not available" path instead of
// dying with SIGSYS; a wholly 32-bit program cannot make a single call and stops.
//
// Empty options. Build refuses Options with nothing selected and returns
// ErrNoRules, so the caller decides explicitly to install nothing rather than
// installing a filter that blocks nothing by accident.
//
// Installation. Install sets no_new_privs on its own locked OS thread and loads
// the program with SECCOMP_FILTER_FLAG_TSYNC: the kernel then applies the filter
// and copies no_new_privs to every other thread of the process, so it holds
// whichever thread later forks. It works with and without cgo.
package seccomp
