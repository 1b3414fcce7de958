package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Notify names one system call that a supervisor answers
// (SECCOMP_RET_USER_NOTIF): the call waits until the supervisor, holding
// the listener InstallListener returns, replies.
type Notify struct {
	Syscall string // key into sysnum
	// NonNull, when true, notifies only the calls whose argument Arg (a
	// pointer) is not NULL; the others are allowed (sendto without an
	// address). Both words of the argument are tested.
	NonNull bool
	Arg     int
	// Mask, when not zero, notifies only the calls whose argument Arg
	// (its low 32 bits, as the kernel reads an int) shares a bit with it;
	// the others are allowed (open and openat without a flag that writes,
	// for the filesystem observer). Not with NonNull.
	Mask uint32
}

// BuildNotify compiles the program of a supervisor's filter for a: the
// calls in calls notify, every other call is allowed (the filter Build
// makes does the refusing, and is installed first). A call through a
// foreign ABI fails with ENOSYS, as in Build's programs.
func BuildNotify(a Arch, calls []Notify) ([]unix.SockFilter, error) {
	if a.audit == 0 {
		return nil, fmt.Errorf("seccomp: build: unsupported architecture")
	}
	if len(calls) == 0 {
		return nil, ErrNoRules
	}
	var p asm
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch)
	p.jump(unix.BPF_JEQ, a.audit, "", "enosys")
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)
	if a.x32Bit != 0 {
		p.jump(unix.BPF_JSET, a.x32Bit, "enosys", "")
	}
	seen := map[string]bool{}
	for i, c := range calls {
		nums, ok := sysnum[c.Syscall]
		if !ok {
			return nil, fmt.Errorf("seccomp: notify %d: no number for syscall %q", i, c.Syscall)
		}
		if seen[c.Syscall] {
			return nil, fmt.Errorf("seccomp: notify %d: syscall %q named twice", i, c.Syscall)
		}
		seen[c.Syscall] = true
		nr := nums[a.column]
		if nr == absent {
			continue
		}
		if !c.NonNull && c.Mask == 0 {
			p.jump(unix.BPF_JEQ, nr, "notify", "")
			continue
		}
		if c.Arg < 0 || c.Arg > 5 || c.NonNull && c.Mask != 0 {
			return nil, fmt.Errorf("seccomp: notify %d (%s): argument index %d out of range, or both NonNull and Mask", i, c.Syscall, c.Arg)
		}
		next := fmt.Sprintf("after-%d", i)
		p.jump(unix.BPF_JEQ, nr, "", next)
		if c.Mask != 0 {
			p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*c.Arg))
			p.jump(unix.BPF_JSET, c.Mask, "notify", "allow")
			p.label(next)
			continue
		}
		// little-endian: the low word, then the high one
		p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*c.Arg))
		p.jump(unix.BPF_JEQ, 0, "", "notify")
		p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*c.Arg+4))
		p.jump(unix.BPF_JEQ, 0, "allow", "notify")
		p.label(next)
	}
	p.label("allow")
	p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	p.label("notify")
	p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF)
	p.label("enosys")
	p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	prog, err := p.finish()
	if err != nil {
		return nil, fmt.Errorf("seccomp: build notify %s: %w", a, err)
	}
	return prog, nil
}

// ErrListenerTaken is returned by InstallListener when a filter this
// process already runs under has a listener: the kernel allows one per
// chain of filters (a sandbox inside a sandbox that supervises).
var ErrListenerTaken = errors.New("seccomp: a filter this process inherited already has a supervisor (one per process: a supervised sandbox inside another)")

// InstallListener loads prog, a program from BuildNotify, on the calling
// OS thread only (which the caller must have locked), and returns the
// listener descriptor its notifications are read from. Only this thread
// and the processes it starts afterwards are under the filter: the
// process's other threads, the supervisor's, stay free to make the calls
// it notifies. The target waits killably once its notification is read
// (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19), so that a
// signal cannot make it restart a call the supervisor is already
// performing for it; older kernels go without.
func InstallListener(prog []unix.SockFilter) (int, error) {
	if len(prog) == 0 || len(prog) > maxInsns {
		return -1, fmt.Errorf("seccomp: install listener: program has %d instructions", len(prog))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("seccomp: set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	for {
		fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(prog)
		switch {
		case errno == 0:
			unix.CloseOnExec(int(fd))
			return int(fd), nil
		case errno == unix.EINVAL && flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0:
			flags &^= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
		case errno == unix.EBUSY:
			return -1, ErrListenerTaken
		default:
			return -1, fmt.Errorf("seccomp: install supervised filter: %w", errno)
		}
	}
}
