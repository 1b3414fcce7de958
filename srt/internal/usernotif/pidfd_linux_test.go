package usernotif

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
)

func TestParseTgid(t *testing.T) {
	for _, c := range []struct {
		status string
		tgid   int
		ok     bool
	}{
		{"Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4250\n", 4242, true},
		{"Tgid:\t1", 1, true},
		{"Name:\tx\nPid:\t5\n", 0, false},
		{"Tgid:\t\nPid:\t5\n", 0, false},
		{"Tgid:\t-3\n", -3, false},
		{"", 0, false},
	} {
		if tgid, ok := parseTgid([]byte(c.status)); ok != c.ok || (ok && tgid != c.tgid) {
			t.Errorf("%q: got %d %v, want %d %v", c.status, tgid, ok, c.tgid, c.ok)
		}
	}
}

// A notification from a thread other than the process's first names the
// thread: its descriptors are reached both ways (a thread pidfd, and,
// as before Linux 6.9, the process's after kcmp).
func TestOpenThread(t *testing.T) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want unix.Stat_t
	unix.Fstat(int(f.Fd()), &want)
	// Threads locked to goroutines until the test ends, until one is not
	// the first (each goroutine's thread is another's than those locked).
	tids := make(chan int)
	release := make(chan struct{})
	defer close(release)
	tid := os.Getpid()
	for i := 0; i < 8 && tid == os.Getpid(); i++ {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tids <- unix.Gettid()
			<-release
		}()
		tid = <-tids
	}
	if tid == os.Getpid() {
		t.Fatal("no goroutine ran on another thread than the first")
	}
	for name, open := range map[string]func(int) (int, error){"openThread": openThread, "openProcessOf": openProcessOf} {
		pidfd, err := open(tid)
		if err != nil {
			t.Fatalf("%s(%d): %v", name, tid, err)
		}
		dup, err := unix.PidfdGetfd(pidfd, int(f.Fd()), 0)
		unix.Close(pidfd)
		if err != nil {
			t.Fatalf("%s: pidfd_getfd: %v", name, err)
		}
		var got unix.Stat_t
		unix.Fstat(dup, &got)
		unix.Close(dup)
		if got.Ino != want.Ino || got.Dev != want.Dev {
			t.Fatalf("%s: another file", name)
		}
	}
	if _, err := openThread(1 << 30); err == nil {
		t.Fatal("a pid that does not exist opened")
	}
}

func TestRegister(t *testing.T) {
	var s Server
	if !s.Empty() {
		t.Fatal("a new server is not empty")
	}
	h := func(*Request) Reply { return Reply{} }
	if err := s.Register(seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, h); err != nil {
		t.Fatal(err)
	}
	if err := s.Register(seccomp.Notify{Syscall: "sendto", NonNull: true, Arg: 4}, unix.SYS_SENDTO, h); err != nil {
		t.Fatal(err)
	}
	err := s.Register(seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, h)
	if err == nil || err.Error() != "usernotif: two handlers for connect" {
		t.Fatalf("a second handler for connect: %v", err)
	}
	if calls := s.Calls(); s.Empty() || len(calls) != 2 || calls[0].Syscall != "connect" || calls[1] != (seccomp.Notify{Syscall: "sendto", NonNull: true, Arg: 4}) {
		t.Fatalf("calls: %+v", calls)
	}
}

// Stack puts a second handler behind the first, which answers unless it
// lets the call run; the masks join, and no mask wins.
func TestStack(t *testing.T) {
	var s Server
	first := func(r *Request) Reply {
		if r.Args[0] == 1 {
			return Fail(unix.EPERM)
		}
		return Continue()
	}
	second := func(*Request) Reply { return Fail(unix.EACCES) }
	if err := s.RegisterInline(seccomp.Notify{Syscall: "openat", Arg: 2, Mask: 1}, unix.SYS_OPENAT, first); err != nil {
		t.Fatal(err)
	}
	if err := s.Stack(seccomp.Notify{Syscall: "openat", Arg: 2, Mask: 0o100}, unix.SYS_OPENAT, second); err != nil {
		t.Fatal(err)
	}
	if err := s.Stack(seccomp.Notify{Syscall: "mkdirat"}, unix.SYS_MKDIRAT, second); err != nil {
		t.Fatal(err)
	}
	if c := s.Calls(); len(c) != 2 || c[0].Mask != 0o101 || c[1].Syscall != "mkdirat" {
		t.Fatalf("calls: %+v", c)
	}
	h := s.handlers[unix.SYS_OPENAT]
	if r := h(&Request{Args: [6]uint64{1}}); r.Errno != unix.EPERM {
		t.Fatalf("the first handler's answer was not kept: %+v", r)
	}
	if r := h(&Request{}); r.Errno != unix.EACCES {
		t.Fatalf("the second handler did not answer: %+v", r)
	}
	if err := s.Stack(seccomp.Notify{Syscall: "openat"}, unix.SYS_OPENAT, second); err != nil || s.Calls()[0].Mask != 0 {
		t.Fatalf("no mask does not win: %v %+v", err, s.Calls())
	}
	if err := s.Register(seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, second); err != nil {
		t.Fatal(err)
	}
	if err := s.Stack(seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, second); err == nil {
		t.Fatal("a handler that is not inline was stacked on")
	}
}
