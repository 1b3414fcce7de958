package seccomp

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// callCase is one seccomp_data input with the answer the "all" program must
// give; concern says which option the answer depends on ("" for none).
type callCase struct {
	name    string
	syscall string
	args    [6]uint64
	concern string // "unix", "uring", "ns", "tty", "keys", "setid" or "" (always ALLOW)
	want    uint32 // answer when concern's option is on
}

// words builds the argument words of a case.
func words(args ...uint64) [6]uint64 {
	var out [6]uint64
	copy(out[:], args)
	return out
}

const (
	newUser = unix.CLONE_NEWUSER
	newNS   = unix.CLONE_NEWNS
	// the flags Go's runtime uses for a new thread, and os/exec for a child
	threadFlags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
		unix.CLONE_SYSVSEM | unix.CLONE_THREAD
	execFlags = unix.CLONE_VFORK | unix.CLONE_VM | unix.CLONE_PIDFD | uint64(unix.SIGCHLD)
	// terminal ioctl requests (asm-generic/ioctls.h), written out independently
	// of the rule table
	reqTIOCSTI   = 0x5412
	reqTIOCLINUX = 0x541C
	reqTCGETS    = 0x5401
	reqFIONREAD  = 0x541B
	reqTIOCSCTTY = 0x540E
	reqTIOCGPTN  = 0x80045430
	// AT_FDCWD as the 64-bit word a caller passes
	atFDCWD64 = 0xffffffff_ffffff9c
)

var callCases = []callCase{
	{"socket AF_UNIX", "socket", words(unix.AF_UNIX, 0), "unix", retEPERM},
	{"socket AF_VSOCK", "socket", words(unix.AF_VSOCK, 0), "vsock", retEPERM},
	{"socket AF_UNIX, high bits set", "socket", words(0xffffffff_00000000|unix.AF_UNIX, 0), "unix", retEPERM},
	{"socket AF_VSOCK, high bits set", "socket", words(0x1_00000000|unix.AF_VSOCK, 0), "vsock", retEPERM},
	{"socket AF_UNIX in high word only (kernel sees 0)", "socket", words(0x1_00000000, 0), "", retAllow},
	{"socket AF_INET", "socket", words(unix.AF_INET, 0), "", retAllow},
	{"socket AF_INET6", "socket", words(unix.AF_INET6, 0), "", retAllow},
	{"socket AF_NETLINK", "socket", words(unix.AF_NETLINK, 0), "", retAllow},
	{"socket AF_INET, AF_UNIX in arg1", "socket", words(unix.AF_INET, unix.AF_UNIX), "", retAllow},
	{"socketpair AF_UNIX SOCK_STREAM", "socketpair", words(unix.AF_UNIX, unix.SOCK_STREAM), "", retAllow},
	{"socketpair AF_UNIX SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK", "socketpair", words(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK), "", retAllow},
	{"socketpair AF_UNIX SOCK_SEQPACKET", "socketpair", words(unix.AF_UNIX, unix.SOCK_SEQPACKET), "", retAllow},
	{"socketpair AF_UNIX SOCK_SEQPACKET|SOCK_CLOEXEC", "socketpair", words(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC), "", retAllow},
	{"socketpair AF_UNIX SOCK_DGRAM", "socketpair", words(unix.AF_UNIX, unix.SOCK_DGRAM), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_DGRAM|SOCK_CLOEXEC", "socketpair", words(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC", "socketpair", words(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_RAW (a datagram socket for AF_UNIX)", "socketpair", words(unix.AF_UNIX, unix.SOCK_RAW), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_RDM", "socketpair", words(unix.AF_UNIX, unix.SOCK_RDM), "unix", retEPERM},
	{"socketpair AF_UNIX type 0", "socketpair", words(unix.AF_UNIX, 0), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_DGRAM, high bits set", "socketpair", words(0xffffffff_00000000|unix.AF_UNIX, 0x1_00000000|unix.SOCK_DGRAM), "unix", retEPERM},
	{"socketpair AF_UNIX SOCK_STREAM, SOCK_DGRAM in the high word", "socketpair", words(unix.AF_UNIX, unix.SOCK_DGRAM<<32|unix.SOCK_STREAM), "", retAllow},
	{"socketpair AF_INET SOCK_DGRAM", "socketpair", words(unix.AF_INET, unix.SOCK_DGRAM), "", retAllow},
	{"io_uring_setup", "io_uring_setup", words(8, 0), "uring", retEPERM},
	{"io_uring_enter", "io_uring_enter", words(3, 0), "uring", retEPERM},
	{"io_uring_register", "io_uring_register", words(3, 0), "uring", retEPERM},

	{"unshare NEWUSER", "unshare", words(newUser, 0), "ns", retEPERM},
	{"unshare NEWNS", "unshare", words(newNS, 0), "ns", retEPERM},
	{"unshare NEWUSER|NEWNET", "unshare", words(newUser|unix.CLONE_NEWNET, 0), "ns", retEPERM},
	{"unshare NEWUSER, high bits set", "unshare", words(0xffffffff_00000000|newUser, 0), "ns", retEPERM},
	{"unshare NEWUSER in high word only", "unshare", words(newUser<<32, 0), "", retAllow},
	{"unshare NEWNET", "unshare", words(unix.CLONE_NEWNET, 0), "", retAllow},
	{"unshare FILES", "unshare", words(unix.CLONE_FILES, 0), "", retAllow},
	{"unshare 0", "unshare", words(0, 0), "", retAllow},
	{"clone NEWUSER", "clone", words(newUser|uint64(unix.SIGCHLD), 0), "ns", retEPERM},
	{"clone NEWNS", "clone", words(newNS, 0), "ns", retEPERM},
	{"clone NEWUSER, high bits set", "clone", words(0xdead0000_00000000|newUser, 0), "ns", retEPERM},
	{"clone NEWUSER in high word only", "clone", words(newUser<<32, 0), "", retAllow},
	{"clone NEWUSER in arg1 (stack)", "clone", words(uint64(unix.SIGCHLD), newUser), "", retAllow},
	{"clone Go thread", "clone", words(threadFlags, 0), "", retAllow},
	{"clone os/exec child", "clone", words(execFlags, 0), "", retAllow},
	{"clone fork", "clone", words(uint64(unix.SIGCHLD), 0), "", retAllow},
	{"clone3", "clone3", words(0, 88), "ns", retENOSYS},
	{"setns", "setns", words(3, newUser), "ns", retEPERM},
	{"mount", "mount", words(0, 0), "ns", retEPERM},
	{"umount2", "umount2", words(0, 0), "ns", retEPERM},
	{"pivot_root", "pivot_root", words(0, 0), "ns", retEPERM},
	{"open_tree", "open_tree", words(0, 0), "ns", retEPERM},
	{"move_mount", "move_mount", words(0, 0), "ns", retEPERM},
	{"fsopen", "fsopen", words(0, 0), "ns", retEPERM},
	{"fsconfig", "fsconfig", words(0, 0), "ns", retEPERM},
	{"fsmount", "fsmount", words(0, 0), "ns", retEPERM},
	{"fspick", "fspick", words(0, 0), "ns", retEPERM},
	{"mount_setattr", "mount_setattr", words(0, 0), "ns", retEPERM},
	{"open_tree_attr", "open_tree_attr", words(0, 0), "ns", retEPERM},

	{"ioctl TIOCSTI", "ioctl", words(0, reqTIOCSTI), "tty", retEPERM},
	{"ioctl TIOCSTI on fd 7", "ioctl", words(7, reqTIOCSTI), "tty", retEPERM},
	{"ioctl TIOCSTI, high bits set", "ioctl", words(0, 0xffffffff_00000000|reqTIOCSTI), "tty", retEPERM},
	{"ioctl TIOCSTI, one high bit set", "ioctl", words(0, 0x1_00000000|reqTIOCSTI), "tty", retEPERM},
	{"ioctl TIOCLINUX", "ioctl", words(0, reqTIOCLINUX), "tty", retEPERM},
	{"ioctl TIOCLINUX, high bits set", "ioctl", words(0, 0x80000000_00000000|reqTIOCLINUX), "tty", retEPERM},
	{"ioctl TIOCSTI in high word only (kernel sees 0)", "ioctl", words(0, reqTIOCSTI<<32), "", retAllow},
	{"ioctl TIOCSTI in arg0 (fd), TCGETS in arg1", "ioctl", words(reqTIOCSTI, reqTCGETS), "", retAllow},
	{"ioctl TCGETS", "ioctl", words(0, reqTCGETS), "", retAllow},
	{"ioctl FIONREAD", "ioctl", words(0, reqFIONREAD), "", retAllow},
	{"ioctl TIOCSCTTY", "ioctl", words(0, reqTIOCSCTTY), "", retAllow},
	{"ioctl TIOCGPTN", "ioctl", words(3, reqTIOCGPTN), "", retAllow},
	{"ioctl TIOCSTI+1", "ioctl", words(0, reqTIOCSTI+1), "", retAllow},
	{"ioctl TIOCSTI-1", "ioctl", words(0, reqTIOCSTI-1), "", retAllow},
	{"ioctl 0", "ioctl", words(0, 0), "", retAllow},

	{"keyctl", "keyctl", words(unix.KEYCTL_READ, 0), "keys", retEPERM},
	{"keyctl JOIN_SESSION_KEYRING", "keyctl", words(unix.KEYCTL_JOIN_SESSION_KEYRING, 0), "keys", retEPERM},
	{"add_key", "add_key", words(0, 0), "keys", retEPERM},
	{"request_key", "request_key", words(0, 0), "keys", retEPERM},

	{"chmod 04755", "chmod", words(0, 0o4755), "setid", retEPERM},
	{"chmod 02755", "chmod", words(0, 0o2755), "setid", retEPERM},
	{"chmod 06755, high bits set", "chmod", words(0, 0xffff0000_00006755), "setid", retEPERM},
	{"chmod 04000 in the high word only", "chmod", words(0, 0o4000<<32|0o755), "", retAllow},
	{"chmod 0755", "chmod", words(0, 0o755), "", retAllow},
	{"chmod 01777 (sticky)", "chmod", words(0, 0o1777), "", retAllow},
	{"chmod mode in arg0", "chmod", words(0o4755, 0o755), "", retAllow},
	{"fchmod 04755", "fchmod", words(3, 0o4755), "setid", retEPERM},
	{"fchmod 0644", "fchmod", words(3, 0o644), "", retAllow},
	{"fchmodat 02755", "fchmodat", words(atFDCWD64, 0, 0o2755), "setid", retEPERM},
	{"fchmodat 0755", "fchmodat", words(atFDCWD64, 0, 0o755), "", retAllow},
	{"fchmodat2 04755", "fchmodat2", words(atFDCWD64, 0, 0o4755, unix.AT_SYMLINK_NOFOLLOW), "setid", retEPERM},
	{"fchmodat2 0600", "fchmodat2", words(atFDCWD64, 0, 0o600, unix.AT_SYMLINK_NOFOLLOW), "", retAllow},
	{"creat 04755", "creat", words(0, 0o4755), "setid", retEPERM},
	{"creat 0644", "creat", words(0, 0o644), "", retAllow},
	{"open O_CREAT 04755", "open", words(0, unix.O_CREAT|unix.O_WRONLY, 0o4755), "setid", retEPERM},
	{"open O_TMPFILE 02755", "open", words(0, unix.O_TMPFILE|unix.O_RDWR, 0o2755), "setid", retEPERM},
	{"open O_CREAT 0644", "open", words(0, unix.O_CREAT|unix.O_WRONLY, 0o644), "", retAllow},
	{"open O_RDONLY, junk 04000 mode", "open", words(0, unix.O_RDONLY, 0o4000), "", retAllow},
	{"openat O_CREAT|O_EXCL 04755", "openat", words(atFDCWD64, 0, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o4755), "setid", retEPERM},
	{"openat O_TMPFILE 04700", "openat", words(3, 0, unix.O_TMPFILE|unix.O_WRONLY, 0o4700), "setid", retEPERM},
	{"openat O_CREAT 06755, high bits set", "openat", words(atFDCWD64, 0, 0xf0000000_00000000|unix.O_CREAT, 0xffffffff_00006755), "setid", retEPERM},
	{"openat O_CREAT 0666", "openat", words(atFDCWD64, 0, unix.O_CREAT|unix.O_WRONLY, 0o666), "", retAllow},
	{"openat O_RDONLY, junk 06000 mode", "openat", words(atFDCWD64, 0, unix.O_RDONLY|unix.O_CLOEXEC, 0o6000), "", retAllow},
	{"openat O_CREAT in the high word, 04755", "openat", words(atFDCWD64, 0, unix.O_CREAT<<32, 0o4755), "", retAllow},
	{"openat2", "openat2", words(atFDCWD64, 0, 0, 24), "setid", retENOSYS},
	{"mknod S_IFREG|04755", "mknod", words(0, unix.S_IFREG|0o4755, 0), "setid", retEPERM},
	{"mknod S_IFIFO|0644", "mknod", words(0, unix.S_IFIFO|0o644, 0), "", retAllow},
	{"mknodat S_IFREG|02755", "mknodat", words(atFDCWD64, 0, unix.S_IFREG|0o2755, 0), "setid", retEPERM},
	{"mknodat S_IFREG|0644", "mknodat", words(atFDCWD64, 0, unix.S_IFREG|0o644, 0), "", retAllow},
	{"mkdir 02775 (a set-group-ID directory is allowed)", "mkdir", words(0, 0o2775), "", retAllow},
	{"mkdirat 02775", "mkdirat", words(atFDCWD64, 0, 0o2775), "", retAllow},
	{"fchown", "fchown", words(3, 0, 0), "", retAllow},

	{"read", "read", words(0, 0), "", retAllow},
	{"write", "write", words(1, 0), "", retAllow},
	{"openat", "openat", words(0, 0), "", retAllow},
	{"execve", "execve", words(0, 0), "", retAllow},
	{"connect", "connect", words(3, 0), "", retAllow},
	{"exit_group", "exit_group", words(0, 0), "", retAllow},
}

func TestInterpretedPrograms(t *testing.T) {
	for _, a := range arches {
		for _, c := range combos {
			prog, err := Build(a, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			on := map[string]bool{"unix": c.opts.BlockUnixSockets, "ns": c.opts.BlockNamespaces,
				"tty": c.opts.BlockTerminalInjection, "keys": c.opts.BlockKeyrings, "setid": c.opts.BlockSetID,
				"uring": c.opts.BlockUnixSockets || c.opts.SuperviseUnixSockets || c.opts.BlockSetID,
				"vsock": c.opts.BlockUnixSockets || c.opts.SuperviseUnixSockets}
			for _, cc := range callCases {
				nr, ok := modelNums[a.name][cc.syscall]
				if !ok {
					continue // e.g. fork has no arm64 number
				}
				want := retAllow
				if on[cc.concern] {
					want = cc.want
				}
				d := seccompData{nr: nr, arch: a.audit, args: cc.args}
				check(t, fmt.Sprintf("%s/%s: %s", a, c.name, cc.name), prog, d, want)
				check(t, fmt.Sprintf("%s/%s: %s (model)", a, c.name, cc.name), prog, d, model(a, c.opts, d))
			}
		}
	}
}

func TestForeignABIs(t *testing.T) {
	const (
		auditI386 = unix.AUDIT_ARCH_I386
		auditARM  = unix.AUDIT_ARCH_ARM
	)
	cases := []struct {
		arch Arch
		name string
		d    seccompData
	}{
		{ArchAMD64, "i386 socketcall", seccompData{nr: 102, arch: auditI386, args: [6]uint64{1}}},
		{ArchAMD64, "i386 socket", seccompData{nr: 359, arch: auditI386, args: [6]uint64{unix.AF_UNIX}}},
		{ArchAMD64, "i386 unshare", seccompData{nr: 310, arch: auditI386, args: [6]uint64{newUser}}},
		{ArchAMD64, "i386 read", seccompData{nr: 3, arch: auditI386}},
		{ArchAMD64, "i386 number of x86-64 socket", seccompData{nr: 41, arch: auditI386, args: [6]uint64{unix.AF_INET}}},
		{ArchAMD64, "aarch64 arch value", seccompData{nr: 198, arch: unix.AUDIT_ARCH_AARCH64}},
		{ArchAMD64, "x32 socket", seccompData{nr: 0x40000000 | 41, arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{unix.AF_UNIX}}},
		{ArchAMD64, "x32 read", seccompData{nr: 0x40000000, arch: unix.AUDIT_ARCH_X86_64}},
		{ArchAMD64, "x32 unshare", seccompData{nr: 0x40000000 | 272, arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{newUser}}},
		{ArchAMD64, "nr -1", seccompData{nr: 0xffffffff, arch: unix.AUDIT_ARCH_X86_64}},
		// ioctl is 54 on i386 and AArch32, 514 on x32; TIOCSTI has the same value there.
		{ArchAMD64, "i386 ioctl TIOCSTI", seccompData{nr: 54, arch: auditI386, args: [6]uint64{0, reqTIOCSTI}}},
		{ArchAMD64, "i386 ioctl TCGETS", seccompData{nr: 54, arch: auditI386, args: [6]uint64{0, reqTCGETS}}},
		{ArchAMD64, "i386 number of x86-64 ioctl, TIOCSTI", seccompData{nr: 16, arch: auditI386, args: [6]uint64{0, reqTIOCSTI}}},
		{ArchAMD64, "x32 ioctl TIOCSTI", seccompData{nr: 0x40000000 | 514, arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{0, reqTIOCSTI}}},
		{ArchAMD64, "x32 bit on x86-64 ioctl TIOCSTI", seccompData{nr: 0x40000000 | 16, arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{0, reqTIOCSTI}}},
		{ArchARM64, "aarch32 socket", seccompData{nr: 281, arch: auditARM, args: [6]uint64{unix.AF_UNIX}}},
		{ArchARM64, "aarch32 read", seccompData{nr: 3, arch: auditARM}},
		{ArchARM64, "x86-64 arch value", seccompData{nr: 41, arch: unix.AUDIT_ARCH_X86_64}},
		{ArchARM64, "arch 0", seccompData{nr: 63}},
		{ArchARM64, "aarch32 ioctl TIOCSTI", seccompData{nr: 54, arch: auditARM, args: [6]uint64{0, reqTIOCSTI}}},
		{ArchARM64, "aarch32 number of arm64 ioctl, TIOCLINUX", seccompData{nr: 29, arch: auditARM, args: [6]uint64{0, reqTIOCLINUX}}},
		{ArchARM64, "x86-64 ioctl TIOCSTI", seccompData{nr: 16, arch: unix.AUDIT_ARCH_X86_64, args: [6]uint64{0, reqTIOCSTI}}},
	}
	for _, c := range combos {
		for _, fc := range cases {
			prog, err := Build(fc.arch, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			check(t, fmt.Sprintf("%s/%s: %s", fc.arch, c.name, fc.name), prog, fc.d, retENOSYS)
		}
	}
	// arm64 has no second ABI under its arch value: bit 30 means nothing there.
	prog, _ := Build(ArchARM64, Options{BlockNamespaces: true})
	check(t, "arm64: nr with bit 30", prog, seccompData{nr: 0x40000000 | 63, arch: unix.AUDIT_ARCH_AARCH64}, retAllow)
}

func check(t *testing.T, name string, prog []unix.SockFilter, d seccompData, want uint32) {
	t.Helper()
	got, err := run(prog, d)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if got != want {
		t.Errorf("%s: nr=%d arch=%#x args[0]=%#x args[1]=%#x: got %s, want %s",
			name, d.nr, d.arch, d.args[0], d.args[1], actionName(got), actionName(want))
	}
}
