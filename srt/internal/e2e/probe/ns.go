//go:build linux

package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks that would give the command a namespace of its own, where it has
// CAP_SYS_ADMIN and can undo the sandbox's mounts, or join another one.
func init() {
	register("unshare", 1, func(a []string) { report("unshare-"+a[0], unshare(nsFlags(a[0]))) })
	register("clone", 1, func(a []string) {
		report("clone-"+a[0], child(&syscall.SysProcAttr{Cloneflags: nsFlags(a[0])}, "noop"))
	})
	register("clone3", 1, func(a []string) { report("clone3-"+a[0], clone3(nsFlags(a[0]))) })
	register("mount-bind", 2, func(a []string) {
		report("mount-bind", unix.Mount(a[0], a[1], "", unix.MS_BIND, ""))
	})
	register("pivot-root", 1, func(a []string) { pivotRoot(a[0]) })
	register("pivot-root-own", 1, pivotRootOwn)
	register("setns", 1, setns)
	register("nested", -1, nested)
}

// nsFlags reads "user", "mnt", "net" joined with "+".
func nsFlags(s string) uintptr {
	var f uintptr
	for _, w := range strings.Split(s, "+") {
		switch w {
		case "user":
			f |= unix.CLONE_NEWUSER
		case "mnt":
			f |= unix.CLONE_NEWNS
		case "net":
			f |= unix.CLONE_NEWNET
		default:
			usage()
		}
	}
	return f
}

// unshare calls unshare(2) with flags. A new user namespace needs a
// single-threaded caller, which a Go program is not, so that one is made in
// a forked child before it execs (as `unshare -r` would); a mount namespace
// only needs the calling thread's filesystem context, so that one is made
// here, on a locked thread. (Go's child does not do CLONE_NEWNS alone: it
// follows it with a mount(2) making / private, whose refusal would pass for
// the unshare's.)
func unshare(flags uintptr) error {
	switch flags {
	case unix.CLONE_NEWUSER:
		return child(&syscall.SysProcAttr{Unshareflags: flags}, "noop")
	case unix.CLONE_NEWNS, unix.CLONE_NEWNET:
		runtime.LockOSThread() // the thread leaves with its namespace when the probe exits
		return unix.Unshare(int(flags))
	}
	usage()
	return nil
}

// child starts the probe again with args, with sys applied between fork and
// exec, and waits for it. Go's child is single-threaded, so unshare works
// there (a multi-threaded process cannot unshare CLONE_NEWUSER); an error of
// the clone or of the child's unshare comes back as the errno.
func child(sys *syscall.SysProcAttr, args ...string) error {
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"probe"}, args...), &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   sys,
	})
	if err != nil {
		return err
	}
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	return nil
}

// cloneArgs is struct clone_args, CLONE_ARGS_SIZE_VER0.
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls uint64
}

// clone3 forks with clone3(2); the child exits at once, before it can touch
// anything of the Go runtime.
func clone3(flags uintptr) error {
	args := cloneArgs{flags: uint64(flags), exitSignal: uint64(unix.SIGCHLD)}
	pid, _, errno := syscall.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args), 0)
	if errno != 0 {
		return errno
	}
	if pid == 0 {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	unix.Wait4(int(pid), &ws, 0, nil)
	return nil
}

// pivotRoot makes dir the root: pivot_root(".", ".") from inside it.
func pivotRoot(dir string) {
	if !report("chdir", unix.Chdir(dir)) {
		return
	}
	report("pivot-root", unix.PivotRoot(".", "."))
}

// pivotRootOwn is the control of pivot-root, for a nested namespace: it
// makes dir a mount point first (pivot_root needs one).
func pivotRootOwn(a []string) {
	os.MkdirAll(a[0], 0o755)
	if !report("make-private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")) {
		return
	}
	if !report("bind", unix.Mount(a[0], a[0], "", unix.MS_BIND, "")) {
		return
	}
	pivotRoot(a[0])
}

// setns opens a namespace file and joins it.
func setns(a []string) {
	runtime.LockOSThread() // setns changes the calling thread only
	fd, err := unix.Open(a[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if !report("setns-open", err) {
		return
	}
	report("setns", unix.Setns(fd, 0))
}

// nested runs another attack in a new user, mount and network namespace of
// the probe's own making, with CAP_SYS_ADMIN and CAP_SYS_CHROOT in it: the
// controls use it to show an attack's code works once the kernel would
// allow it (which needs allowNestedUserNamespaces, i.e. no seccomp
// namespace filter, and for mounts no Landlock either). No uid is mapped (mapping uid 0 of the sandbox, which
// root's is, needs CAP_SETFCAP, which bubblewrap drops), so the
// capabilities cross exec as ambient ones; files are still created and
// checked with the probe's own uid.
func nested(a []string) {
	if len(a) == 0 {
		usage()
	}
	report("nested", child(&syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SYS_CHROOT},
	}, a...))
}
