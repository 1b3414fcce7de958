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
	arg0    uint64
	arg1    uint64
	concern string // "unix", "ns", "tty" or "" (always ALLOW)
	want    uint32 // answer when concern's option is on
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
)

var callCases = []callCase{
	{"socket AF_UNIX", "socket", unix.AF_UNIX, 0, "unix", retEPERM},
	{"socket AF_VSOCK", "socket", unix.AF_VSOCK, 0, "unix", retEPERM},
	{"socket AF_UNIX, high bits set", "socket", 0xffffffff_00000000 | unix.AF_UNIX, 0, "unix", retEPERM},
	{"socket AF_VSOCK, high bits set", "socket", 0x1_00000000 | unix.AF_VSOCK, 0, "unix", retEPERM},
	{"socket AF_UNIX in high word only (kernel sees 0)", "socket", 0x1_00000000, 0, "", retAllow},
	{"socket AF_INET", "socket", unix.AF_INET, 0, "", retAllow},
	{"socket AF_INET6", "socket", unix.AF_INET6, 0, "", retAllow},
	{"socket AF_NETLINK", "socket", unix.AF_NETLINK, 0, "", retAllow},
	{"socket AF_INET, AF_UNIX in arg1", "socket", unix.AF_INET, unix.AF_UNIX, "", retAllow},
	{"socketpair AF_UNIX", "socketpair", unix.AF_UNIX, 0, "", retAllow},
	{"io_uring_setup", "io_uring_setup", 8, 0, "unix", retEPERM},
	{"io_uring_enter", "io_uring_enter", 3, 0, "unix", retEPERM},
	{"io_uring_register", "io_uring_register", 3, 0, "unix", retEPERM},

	{"unshare NEWUSER", "unshare", newUser, 0, "ns", retEPERM},
	{"unshare NEWNS", "unshare", newNS, 0, "ns", retEPERM},
	{"unshare NEWUSER|NEWNET", "unshare", newUser | unix.CLONE_NEWNET, 0, "ns", retEPERM},
	{"unshare NEWUSER, high bits set", "unshare", 0xffffffff_00000000 | newUser, 0, "ns", retEPERM},
	{"unshare NEWUSER in high word only", "unshare", newUser << 32, 0, "", retAllow},
	{"unshare NEWNET", "unshare", unix.CLONE_NEWNET, 0, "", retAllow},
	{"unshare FILES", "unshare", unix.CLONE_FILES, 0, "", retAllow},
	{"unshare 0", "unshare", 0, 0, "", retAllow},
	{"clone NEWUSER", "clone", newUser | uint64(unix.SIGCHLD), 0, "ns", retEPERM},
	{"clone NEWNS", "clone", newNS, 0, "ns", retEPERM},
	{"clone NEWUSER, high bits set", "clone", 0xdead0000_00000000 | newUser, 0, "ns", retEPERM},
	{"clone NEWUSER in high word only", "clone", newUser << 32, 0, "", retAllow},
	{"clone NEWUSER in arg1 (stack)", "clone", uint64(unix.SIGCHLD), newUser, "", retAllow},
	{"clone Go thread", "clone", threadFlags, 0, "", retAllow},
	{"clone os/exec child", "clone", execFlags, 0, "", retAllow},
	{"clone fork", "clone", uint64(unix.SIGCHLD), 0, "", retAllow},
	{"clone3", "clone3", 0, 88, "ns", retENOSYS},
	{"setns", "setns", 3, newUser, "ns", retEPERM},
	{"mount", "mount", 0, 0, "ns", retEPERM},
	{"umount2", "umount2", 0, 0, "ns", retEPERM},
	{"pivot_root", "pivot_root", 0, 0, "ns", retEPERM},
	{"open_tree", "open_tree", 0, 0, "ns", retEPERM},
	{"move_mount", "move_mount", 0, 0, "ns", retEPERM},
	{"fsopen", "fsopen", 0, 0, "ns", retEPERM},
	{"fsconfig", "fsconfig", 0, 0, "ns", retEPERM},
	{"fsmount", "fsmount", 0, 0, "ns", retEPERM},
	{"fspick", "fspick", 0, 0, "ns", retEPERM},
	{"mount_setattr", "mount_setattr", 0, 0, "ns", retEPERM},
	{"open_tree_attr", "open_tree_attr", 0, 0, "ns", retEPERM},

	{"ioctl TIOCSTI", "ioctl", 0, reqTIOCSTI, "tty", retEPERM},
	{"ioctl TIOCSTI on fd 7", "ioctl", 7, reqTIOCSTI, "tty", retEPERM},
	{"ioctl TIOCSTI, high bits set", "ioctl", 0, 0xffffffff_00000000 | reqTIOCSTI, "tty", retEPERM},
	{"ioctl TIOCSTI, one high bit set", "ioctl", 0, 0x1_00000000 | reqTIOCSTI, "tty", retEPERM},
	{"ioctl TIOCLINUX", "ioctl", 0, reqTIOCLINUX, "tty", retEPERM},
	{"ioctl TIOCLINUX, high bits set", "ioctl", 0, 0x80000000_00000000 | reqTIOCLINUX, "tty", retEPERM},
	{"ioctl TIOCSTI in high word only (kernel sees 0)", "ioctl", 0, reqTIOCSTI << 32, "", retAllow},
	{"ioctl TIOCSTI in arg0 (fd), TCGETS in arg1", "ioctl", reqTIOCSTI, reqTCGETS, "", retAllow},
	{"ioctl TCGETS", "ioctl", 0, reqTCGETS, "", retAllow},
	{"ioctl FIONREAD", "ioctl", 0, reqFIONREAD, "", retAllow},
	{"ioctl TIOCSCTTY", "ioctl", 0, reqTIOCSCTTY, "", retAllow},
	{"ioctl TIOCGPTN", "ioctl", 3, reqTIOCGPTN, "", retAllow},
	{"ioctl TIOCSTI+1", "ioctl", 0, reqTIOCSTI + 1, "", retAllow},
	{"ioctl TIOCSTI-1", "ioctl", 0, reqTIOCSTI - 1, "", retAllow},
	{"ioctl 0", "ioctl", 0, 0, "", retAllow},

	{"read", "read", 0, 0, "", retAllow},
	{"write", "write", 1, 0, "", retAllow},
	{"openat", "openat", 0, 0, "", retAllow},
	{"execve", "execve", 0, 0, "", retAllow},
	{"connect", "connect", 3, 0, "", retAllow},
	{"exit_group", "exit_group", 0, 0, "", retAllow},
}

func TestInterpretedPrograms(t *testing.T) {
	for _, a := range arches {
		for _, c := range combos {
			prog, err := Build(a, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			on := map[string]bool{"unix": c.opts.BlockUnixSockets, "ns": c.opts.BlockNamespaces,
				"tty": c.opts.BlockTerminalInjection}
			for _, cc := range callCases {
				nr, ok := modelNums[a.name][cc.syscall]
				if !ok {
					continue // e.g. fork has no arm64 number
				}
				want := retAllow
				if on[cc.concern] {
					want = cc.want
				}
				d := seccompData{nr: nr, arch: a.audit, args: [6]uint64{cc.arg0, cc.arg1}}
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
