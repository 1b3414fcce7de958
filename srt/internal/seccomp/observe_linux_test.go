package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestObserver runs the observer's calls, built by BuildNotify, in the
// interpreter, on both architectures, with and without reads: writes are
// notified, reads only with reads, every other call is allowed and every
// foreign ABI call fails with ENOSYS.
func TestObserver(t *testing.T) {
	const notify, allow = unix.SECCOMP_RET_USER_NOTIF, unix.SECCOMP_RET_ALLOW
	cases := []struct {
		name      string
		syscall   string
		args      [6]uint64
		write     bool // notified without reads
		readsOnly bool // notified only with reads
	}{
		{name: "openat O_RDONLY", syscall: "openat", args: words(0, 0, unix.O_RDONLY), readsOnly: true},
		{name: "openat O_RDONLY|O_CLOEXEC|O_DIRECTORY", syscall: "openat", args: words(0, 0, unix.O_CLOEXEC|unix.O_DIRECTORY), readsOnly: true},
		{name: "openat O_RDONLY|O_APPEND", syscall: "openat", args: words(0, 0, unix.O_APPEND), readsOnly: true},
		{name: "openat O_WRONLY", syscall: "openat", args: words(0, 0, unix.O_WRONLY), write: true},
		{name: "openat O_RDWR", syscall: "openat", args: words(0, 0, unix.O_RDWR), write: true},
		{name: "openat O_CREAT", syscall: "openat", args: words(0, 0, unix.O_CREAT), write: true},
		{name: "openat O_TRUNC", syscall: "openat", args: words(0, 0, unix.O_TRUNC), write: true},
		{name: "openat O_TMPFILE", syscall: "openat", args: words(0, 0, unix.O_TMPFILE|unix.O_RDWR), write: true},
		// the kernel reads the low 32 bits of the flags
		{name: "openat O_RDONLY with high bits", syscall: "openat", args: words(0, 0, 1<<40), readsOnly: true},
		{name: "openat O_WRONLY with high bits", syscall: "openat", args: words(0, 0, 1<<40|unix.O_WRONLY), write: true},
		{name: "open O_WRONLY", syscall: "open", args: words(0, unix.O_WRONLY), write: true},
		{name: "open O_RDONLY", syscall: "open", args: words(0, unix.O_RDONLY), readsOnly: true},
		{name: "mkdirat", syscall: "mkdirat", write: true},
		{name: "unlinkat", syscall: "unlinkat", write: true},
		{name: "renameat2", syscall: "renameat2", write: true},
		{name: "symlinkat", syscall: "symlinkat", write: true},
		{name: "truncate", syscall: "truncate", write: true},
		{name: "fchownat", syscall: "fchownat", write: true},
		{name: "utimensat", syscall: "utimensat", write: true},
		{name: "setxattr", syscall: "setxattr", write: true},
		{name: "rename", syscall: "rename", write: true},
		{name: "creat", syscall: "creat", write: true},
		{name: "fchmod (a descriptor, no path)", syscall: "fchmod"},
		{name: "socket", syscall: "socket"},
		{name: "ioctl", syscall: "ioctl"},
	}
	for _, a := range []Arch{ArchAMD64, ArchARM64} {
		for _, reads := range []bool{false, true} {
			prog, err := BuildNotify(a, ObserverNotify(reads))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				nr := sysnum[c.syscall][a.column]
				if nr == absent {
					continue
				}
				want := uint32(allow)
				if c.write || reads && c.readsOnly {
					want = notify
				}
				got, err := run(prog, seccompData{nr: nr, arch: a.audit, args: c.args})
				if err != nil {
					t.Fatalf("%s reads=%v %s: %v", a, reads, c.name, err)
				}
				if got != want {
					t.Errorf("%s reads=%v %s: got %#x, want %#x", a, reads, c.name, got, want)
				}
				if _, ok := Observed(a, int32(nr)); ok != (c.write || c.readsOnly) {
					t.Errorf("%s %s: Observed says %v", a, c.name, ok)
				}
			}
			// another ABI's call with a write's number
			if got, _ := run(prog, seccompData{nr: sysnum["openat"][a.column], arch: unix.AUDIT_ARCH_I386, args: words(0, 0, unix.O_WRONLY)}); got != unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS) {
				t.Errorf("%s: a foreign ABI's call got %#x, want ENOSYS", a, got)
			}
		}
	}
}

// TestObservedCallsComplete: every observed call has a number on some
// architecture and a path argument within range.
func TestObservedCallsComplete(t *testing.T) {
	for _, c := range observedCalls {
		nums, ok := sysnum[c.Name]
		if !ok || nums[0] == absent && nums[1] == absent {
			t.Errorf("%s: no number", c.Name)
		}
		if len(c.Paths) == 0 {
			t.Errorf("%s: no path", c.Name)
		}
		for _, p := range c.Paths {
			if p.Path < 0 || p.Path > 5 || p.DirFD > 5 || p.DirFD == p.Path {
				t.Errorf("%s: bad path argument %+v", c.Name, p)
			}
		}
	}
}
