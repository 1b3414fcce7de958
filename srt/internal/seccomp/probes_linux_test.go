package seccomp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A probe is one real system call made in the filtered child. before marks
// probes that change nothing when they succeed, so the child can also run them
// before installing the filter to show what the kernel alone answers.
type probe struct {
	name   string
	before bool
	want   string // errno name after the filter, or "OK"
	run    func() string
}

// probes are the ones below followed by the terminal ones (pty_linux_test.go)
// and the keyring, set-id and socketpair ones (kernel_probes_linux_test.go).
var probes = append([]probe{
	{"socket(AF_UNIX)", true, "EPERM", func() string { return sock(unix.AF_UNIX) }},
	{"socket(AF_UNIX|0xffffffff00000000)", true, "EPERM", func() string { return sock(0xffffffff_00000000 | unix.AF_UNIX) }},
	{"socket(AF_VSOCK)", true, "EPERM", func() string { return sock(unix.AF_VSOCK) }},
	{"socket(AF_INET)", true, "OK", func() string { return sock(unix.AF_INET) }},
	// the filter lets it through (low word 0); the kernel then sees AF_UNSPEC
	{"socket(0x100000000)", true, "EAFNOSUPPORT", func() string { return sock(0x1_00000000) }},
	{"socketpair(AF_UNIX)", true, "OK", func() string { return pair(unix.SOCK_STREAM) }},
	{"io_uring_setup(1)", true, "EPERM", func() string {
		return fdCall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&ioUringParams[0])), 0)
	}},
	{"io_uring_enter(-1)", true, "EPERM", func() string { return call(unix.SYS_IO_URING_ENTER, ^uintptr(0), 0, 0) }},
	{"io_uring_register(-1)", true, "EPERM", func() string { return call(unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0, 0) }},
	// a multi-threaded process gets EINVAL from the kernel, so this is safe before
	{"unshare(CLONE_NEWUSER)", true, "EPERM", func() string { return call(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0) }},
	{"unshare(CLONE_NEWUSER|0xffffffff00000000)", true, "EPERM", func() string {
		return call(unix.SYS_UNSHARE, 0xffffffff_00000000|unix.CLONE_NEWUSER, 0, 0)
	}},
	{"unshare(CLONE_NEWNS)", false, "EPERM", func() string { return call(unix.SYS_UNSHARE, unix.CLONE_NEWNS, 0, 0) }},
	{"unshare(0)", true, "OK", func() string { return call(unix.SYS_UNSHARE, 0, 0, 0) }},
	{"clone3(NULL, 0)", true, "ENOSYS", func() string { return call(unix.SYS_CLONE3, 0, 0, 0) }},
	{"setns(-1, 0)", true, "EPERM", func() string { return call(unix.SYS_SETNS, ^uintptr(0), 0, 0) }},
	{"mount(tmpfs on /nonexistent)", true, "EPERM", func() string {
		return errName(unix.Mount("none", "/nonexistent-srt", "tmpfs", 0, ""))
	}},
	{"umount2(/nonexistent)", true, "EPERM", func() string { return errName(unix.Unmount("/nonexistent-srt", 0)) }},
	{"pivot_root(/nonexistent)", true, "EPERM", func() string {
		return errName(unix.PivotRoot("/nonexistent-srt", "/nonexistent-srt"))
	}},
	{"open_tree(/nonexistent)", true, "EPERM", func() string {
		return fdCall(unix.SYS_OPEN_TREE, uintptr(atFDCWD), cstr("/nonexistent-srt"), 0)
	}},
	{"move_mount(-1)", true, "EPERM", func() string { return call(unix.SYS_MOVE_MOUNT, ^uintptr(0), cstr(""), ^uintptr(0)) }},
	{"fsopen(nosuchfs)", true, "EPERM", func() string { return fdCall(unix.SYS_FSOPEN, cstr("nosuchfs-srt"), 0, 0) }},
	{"fsconfig(-1)", true, "EPERM", func() string { return call(unix.SYS_FSCONFIG, ^uintptr(0), 0, 0) }},
	{"fsmount(-1)", true, "EPERM", func() string { return fdCall(unix.SYS_FSMOUNT, ^uintptr(0), 0, 0) }},
	{"fspick(/nonexistent)", true, "EPERM", func() string {
		return fdCall(unix.SYS_FSPICK, uintptr(atFDCWD), cstr("/nonexistent-srt"), 0)
	}},
	{"mount_setattr(-1)", true, "EPERM", func() string { return call(unix.SYS_MOUNT_SETATTR, ^uintptr(0), cstr(""), 0) }},
	{"open_tree_attr(/nonexistent)", true, "EPERM", func() string {
		return fdCall(unix.SYS_OPEN_TREE_ATTR, uintptr(atFDCWD), cstr("/nonexistent-srt"), 0)
	}},
	{"os/exec /bin/true", true, "OK", func() string { return errName(exec.Command("/bin/true").Run()) }},
	{"os/exec /bin/true, Cloneflags CLONE_NEWUSER", false, "EPERM", func() string {
		return runTrue(&syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER})
	}},
	{"os/exec /bin/true, Cloneflags CLONE_NEWNS", false, "EPERM", func() string {
		return runTrue(&syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS})
	}},
	{"os/exec /bin/true, Unshareflags CLONE_NEWUSER", false, "EPERM", func() string {
		return runTrue(&syscall.SysProcAttr{Unshareflags: unix.CLONE_NEWUSER})
	}},
	// UseCgroupFD is the one os/exec path that uses clone3; Go does not fall back.
	{"os/exec /bin/true, UseCgroupFD (clone3)", false, "ENOSYS", func() string {
		return runTrue(&syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: 0})
	}},
	{"execve'd grandchild: socket(AF_UNIX)", false, "EPERM", grandchild},
	{"socket(AF_UNIX) on threads that existed before install", false, "EPERM", onLockedThreads},
	{"every thread: Seccomp 2, NoNewPrivs 1", true, "OK", allThreadsFiltered},
}, append(ptyProbes, kernelProbes...)...)

// atFDCWD is a variable so that converting it to uintptr sign-extends.
var atFDCWD = unix.AT_FDCWD

func errName(err error) string {
	if err == nil {
		return "OK"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func sock(domain uint64) string { return fdCall(unix.SYS_SOCKET, uintptr(domain), unix.SOCK_STREAM, 0) }

func call(nr, a1, a2, a3 uintptr) string {
	_, _, e := unix.Syscall(nr, a1, a2, a3)
	if e != 0 {
		return unix.ErrnoName(e)
	}
	return "OK"
}

// fdCall is call for syscalls that return a descriptor, which it closes.
func fdCall(nr, a1, a2, a3 uintptr) string {
	fd, _, e := unix.Syscall(nr, a1, a2, a3)
	if e != 0 {
		return unix.ErrnoName(e)
	}
	unix.Close(int(fd))
	return "OK"
}

// pinned keeps every cstr buffer reachable, so none is freed while a raw
// syscall still holds its address as a uintptr (heap objects do not move).
var pinned []*byte

// ioUringParams is struct io_uring_params, global so its address is stable.
var ioUringParams [120]byte

func cstr(s string) uintptr {
	p, _ := unix.BytePtrFromString(s)
	pinned = append(pinned, p)
	return uintptr(unsafe.Pointer(p))
}

func runTrue(attr *syscall.SysProcAttr) string {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = attr
	return errName(cmd.Run())
}

// grandchild execs this test binary again; after execve it reports what
// socket(AF_UNIX) gives it, showing the filter survives exec.
func grandchild() string {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), childEnv+"=socket")
	out, err := cmd.Output()
	if err != nil {
		return "exec: " + errName(err)
	}
	return strings.TrimSpace(string(out))
}

// lockedThreads are OS threads parked before the filter goes in; after it,
// each tries socket(AF_UNIX) on its own thread.
var lockedThreads []chan chan string

func parkThreads(n int) {
	for i := 0; i < n; i++ {
		ask := make(chan chan string)
		ready := make(chan struct{})
		go func() {
			// LockOSThread without unlock: the thread dies with the goroutine
			// rather than being reused, so each one stays distinct.
			runtime.LockOSThread()
			close(ready)
			for reply := range ask {
				reply <- sock(unix.AF_UNIX)
			}
		}()
		<-ready
		lockedThreads = append(lockedThreads, ask)
	}
}

func onLockedThreads() string {
	seen := map[string]bool{}
	var all []string
	for _, ask := range lockedThreads {
		reply := make(chan string)
		ask <- reply
		if r := <-reply; !seen[r] {
			seen[r] = true
			all = append(all, r)
		}
	}
	return strings.Join(all, ",")
}

// allThreadsFiltered reads every thread's status file.
func allThreadsFiltered() string {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		return fmt.Sprintf("no threads: %v", err)
	}
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread exited
		}
		s := string(b)
		if !strings.Contains(s, "\nSeccomp:\t2\n") || !strings.Contains(s, "\nNoNewPrivs:\t1\n") {
			return fmt.Sprintf("%s: not filtered (%d threads)", path, len(tasks))
		}
	}
	return "OK"
}
