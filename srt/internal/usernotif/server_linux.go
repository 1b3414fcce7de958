// Package usernotif serves seccomp user notifications: a filter built with
// seccomp.BuildNotify makes the calls it names wait, and a Server reads each
// one from the listener and answers it with the handler registered for its
// system call. The init stage runs one Server for everything it
// supervises; each feature registers the handlers of its calls (Register)
// and the calls that go into the filter (Calls).
//
// Rules for handlers. A notification carries the target's pid and its
// arguments; every pointer points into the target's memory, which the
// target (another of its threads, or a process sharing the mapping) may
// change at any time. So a handler never answers Continue after looking at
// that memory: the kernel would read it again, after the check. It
// performs the call itself, on a copy of what it read and on the target's
// own descriptor (Request.FD), and answers with the result. Request.Read
// checks that the notification is still pending after it reads, so the
// memory read was the target's. The one exception is a handler whose
// Continue grants nothing: the filesystem observer's, which decides
// nothing, and the Landlock backend's chain supervisor's, which lets
// through every call it does not perform itself, to run under the
// command's Landlock domain as if never notified (what the kernel then
// reads is checked by Landlock, whatever it is).
package usernotif

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
)

// The kernel's structures (include/uapi/linux/seccomp.h).
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  struct {
		nr   int32
		arch uint32
		ip   uint64
		args [6]uint64
	}
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// SECCOMP_IOCTL_NOTIF_ID_VALID: x/sys/unix has the value with the right
// direction bits (the kernel accepts both).
const ioctlIDValid = unix.SECCOMP_IOCTL_NOTIF_ID_VALID

// SECCOMP_IOCTL_NOTIF_SET_FLAGS (_IOW('!', 4, __u64)) and its one flag,
// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, which golang.org/x/sys lacks.
const (
	ioctlSetFlags                = 0x40082104
	seccompUserNotifFDSyncWakeUp = 1
)

// Reply is a handler's answer: the call returns Val, or fails with Errno
// when it is not zero, or, with Continue, runs as if never notified.
type Reply struct {
	Val      int64
	Errno    unix.Errno
	Continue bool
	// Inject, when not nil, is a descriptor of this process that the call
	// returns as a new descriptor of the target (SECCOMP_IOCTL_NOTIF_ADDFD):
	// an open performed for it. Serve installs it and closes it here.
	Inject *Injection
	// Later, when not nil, is the rest of an inline handler's work that may
	// block (an open that waits for a FIFO's reader): Serve runs it on a
	// goroutine of its own and sends its reply instead.
	Later func() Reply
}

// Injection is a descriptor handed to the target (Reply.Inject).
type Injection struct {
	FD      int
	CloExec bool // the target's new descriptor is close-on-exec
}

// Continue is the reply that lets the call run as if no filter had
// notified it (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Only where letting the
// call run grants nothing (see the package doc): the kernel reads the
// target's memory again after the reply, so what the handler read is not
// what runs.
func Continue() Reply { return Reply{Continue: true} }

// Fail is the reply that makes the call fail with e.
func Fail(e unix.Errno) Reply { return Reply{Errno: e} }

// Handler answers one notification.
type Handler func(*Request) Reply

// Server dispatches the notifications of one listener to the handlers
// registered for their system calls. Register every handler before Serve.
type Server struct {
	handlers map[int32]Handler
	inline   map[int32]bool // answered in Serve's own loop (RegisterInline)
	calls    []seccomp.Notify
}

// Register makes h answer the calls named by n. The number is the build
// architecture's (x/sys/unix SYS_*), the name seccomp's key for it.
func (s *Server) Register(n seccomp.Notify, nr int, h Handler) error {
	if s.handlers == nil {
		s.handlers = map[int32]Handler{}
	}
	if _, dup := s.handlers[int32(nr)]; dup {
		return fmt.Errorf("usernotif: two handlers for %s", n.Syscall)
	}
	s.handlers[int32(nr)] = h
	s.calls = append(s.calls, n)
	return nil
}

// RegisterInline is Register for a handler that never blocks and only
// reads (the filesystem observer's, which always lets the call run): Serve
// answers it in its own loop, without a goroutine, whose start would cost
// the waiting call a scheduler round trip (about 0.1 ms measured per open,
// against a few microseconds inline).
func (s *Server) RegisterInline(n seccomp.Notify, nr int, h Handler) error {
	if err := s.Register(n, nr, h); err != nil {
		return err
	}
	if s.inline == nil {
		s.inline = map[int32]bool{}
	}
	s.inline[int32(nr)] = true
	return nil
}

// Stack is RegisterInline that, when a handler is registered for nr
// already, puts h behind it: the first handler answers unless it lets the
// call run (Continue), and then h does. The filter notifies the call when
// either asks for it (their masks joined; no mask wins). Both must keep
// RegisterInline's rules (never block; what may block goes in
// Reply.Later).
func (s *Server) Stack(n seccomp.Notify, nr int, h Handler) error {
	prev, ok := s.handlers[int32(nr)]
	if !ok {
		return s.RegisterInline(n, nr, h)
	}
	if !s.inline[int32(nr)] || n.NonNull {
		return fmt.Errorf("usernotif: %s cannot be stacked", n.Syscall)
	}
	for i := range s.calls {
		c := &s.calls[i]
		if c.Syscall != n.Syscall {
			continue
		}
		switch {
		case c.NonNull:
			return fmt.Errorf("usernotif: %s cannot be stacked", n.Syscall)
		case c.Mask == 0 || n.Mask == 0:
			c.Mask, c.Arg = 0, 0
		case c.Arg != n.Arg:
			return fmt.Errorf("usernotif: %s: two masks on different arguments", n.Syscall)
		default:
			c.Mask |= n.Mask
		}
	}
	s.handlers[int32(nr)] = func(r *Request) Reply {
		if reply := prev(r); !reply.Continue {
			return reply
		}
		return h(r)
	}
	return nil
}

// Calls are the calls registered, for seccomp.BuildNotify.
func (s *Server) Calls() []seccomp.Notify { return s.calls }

// Empty says whether nothing is registered (no filter to install).
func (s *Server) Empty() bool { return len(s.calls) == 0 }

// Serve reads notifications from listener until it fails (the last
// process under the filter is gone), each answered on a goroutine of its
// own: a connect that blocks must not hold up the others.
func (s *Server) Serve(listener int) error {
	runtime.LockOSThread()
	// Linux 6.6 and later can hand each notification straight to this
	// thread on the target's CPU, and the answer straight back, instead of
	// waking a thread that may sleep elsewhere: about a quarter less per
	// notified call here. An older kernel refuses the flag (EINVAL); the
	// notifications work as before.
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), ioctlSetFlags, seccompUserNotifFDSyncWakeUp)
	for {
		var n notif
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
		switch errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENOENT:
			// The target was gone (killed) before we read its notification.
			continue
		default:
			return fmt.Errorf("usernotif: receive: %w", errno)
		}
		h := s.handlers[n.data.nr]
		if h != nil && s.inline[n.data.nr] {
			r := &Request{listener: listener, id: n.id, Pid: int(n.pid), Nr: int(n.data.nr), Args: n.data.args}
			reply := h(r)
			if later := reply.Later; later != nil {
				go func() {
					reply := later()
					r.close()
					s.send(listener, n.id, reply)
				}()
				continue
			}
			r.close()
			s.send(listener, n.id, reply)
			continue
		}
		go func() {
			r := &Request{listener: listener, id: n.id, Pid: int(n.pid), Nr: int(n.data.nr), Args: n.data.args}
			var reply Reply
			if h == nil {
				// The filter names only registered calls; anything else is
				// a bug, refused rather than let through.
				reply = Fail(unix.ENOSYS)
			} else {
				reply = h(r)
			}
			r.close()
			s.send(listener, n.id, reply)
		}()
	}
}

func (s *Server) send(listener int, id uint64, r Reply) {
	if r.Inject != nil {
		var done bool
		if r, done = inject(listener, id, r.Inject); done {
			return // answered with the descriptor
		}
	}
	resp := notifResp{id: id, val: r.Val}
	switch {
	case r.Continue:
		resp = notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	case r.Errno != 0:
		resp = notifResp{id: id, error: -int32(r.Errno)}
	}
	// ENOENT: the target was killed, or interrupted before it was
	// answered. Nothing to do.
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

// seccomp_notif_addfd (include/uapi/linux/seccomp.h).
type notifAddFD struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

const addfdFlagSend = 1 << 1 // SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)

// inject installs in.FD in the target and answers the call with its
// number, at once (SECCOMP_ADDFD_FLAG_SEND) or, on a kernel without it,
// in two steps. It closes in.FD. done says the call was answered;
// otherwise send answers it with the reply.
//
// No signal may reach this thread while the ioctl waits: with
// SECCOMP_ADDFD_FLAG_SEND the kernel marks the call answered before the
// target has taken the descriptor, and an ADDFD interrupted then (the Go
// runtime's preemption signal, SIGURG) withdraws the descriptor but not
// the answer, so the target's call returned 0 — an open that "returned"
// descriptor 0, its standard input (seen once in some 100 000 opens).
// The restarted ioctl then finds the call answered (ENOENT). Every
// signal is held back for the ioctl's duration instead, on a locked
// thread, and delivered after it.
func inject(listener int, id uint64, in *Injection) (reply Reply, done bool) {
	defer unix.Close(in.FD)
	a := notifAddFD{id: id, srcfd: uint32(in.FD), flags: addfdFlagSend}
	if in.CloExec {
		a.newfdFlags = unix.O_CLOEXEC
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	all, old := unix.Sigset_t{}, unix.Sigset_t{}
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old); err != nil {
		return Fail(unix.EIO), false
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&a)))
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if errno == unix.EINVAL {
		a.flags = 0
		fd, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&a)))
		if e == 0 {
			return Reply{Val: int64(fd)}, false
		}
		errno = e
	}
	switch errno {
	case 0, unix.ENOENT: // answered; or the target is gone
		return Reply{}, true
	case unix.EMFILE, unix.EBADF:
		// The target's descriptor table is full (RLIMIT_NOFILE): what
		// its own open would have said.
		return Fail(unix.EMFILE), false
	}
	return Fail(unix.EIO), false
}

// Request is one notification being answered.
type Request struct {
	listener int
	id       uint64
	Pid      int
	Nr       int
	Args     [6]uint64
	pidfd    int // opened by FD, closed once answered
}

// ErrGone is returned when the notification is no longer pending: the
// target was killed, or its pid now names another process.
var ErrGone = errors.New("usernotif: the target is gone")

// Valid says whether the notification is still pending.
func (r *Request) Valid() bool {
	id := r.id
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(r.listener), ioctlIDValid, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// Read copies n bytes at addr of the target's memory. It fails with
// ErrGone when the notification stopped being pending (the pid may then
// have been another process's), and with EFAULT when the memory is not
// mapped.
func (r *Request) Read(addr uint64, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	got, err := unix.ProcessVMReadv(r.Pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if !r.Valid() {
		return nil, ErrGone
	}
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, unix.EFAULT
	}
	return buf, nil
}

// ReadString reads the NUL-terminated string at addr of the target's
// memory, at most max bytes before the NUL, a page at a time (a string
// that ends just before an unmapped page is read whole). It fails with
// EFAULT when the memory is not mapped, ENAMETOOLONG when no NUL comes
// within max bytes, and ErrGone as Read.
func (r *Request) ReadString(addr uint64, max int) ([]byte, error) {
	const page = 4096
	var scratch [page]byte
	var out []byte
	for len(out) <= max {
		n := min(page-int(addr%page), max+1-len(out))
		got, err := unix.ProcessVMReadv(r.Pid, []unix.Iovec{{Base: &scratch[0], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
		if err == nil && got <= 0 {
			err = unix.EFAULT
		}
		if err != nil {
			if !r.Valid() {
				return nil, ErrGone
			}
			return nil, err
		}
		for i, b := range scratch[:got] {
			if b == 0 { // i < n <= max+1-len(out): it fits in max
				out = append(out, scratch[:i]...)
				if !r.Valid() {
					return nil, ErrGone
				}
				return out, nil
			}
		}
		out = append(out, scratch[:got]...)
		addr += uint64(got)
	}
	return nil, unix.ENAMETOOLONG
}

// Write copies b to addr of the target's memory (what the kernel would
// write back, sendmmsg's counts).
func (r *Request) Write(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	got, err := unix.ProcessVMWritev(r.Pid, []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}, 0)
	if err != nil {
		return err
	}
	if got != len(b) {
		return unix.EFAULT
	}
	return nil
}

// FD duplicates the target's descriptor fd into this process: the same
// open file, so a connect or send on it is the target's (the calling
// thread's descriptor table, which may be another thread's than the
// process's first). The caller closes it. EBADF when the target has no
// such descriptor.
func (r *Request) FD(fd int) (int, error) {
	if r.pidfd <= 0 {
		pidfd, err := openThread(r.Pid)
		if err != nil {
			return -1, err
		}
		// The pid was the target's when the notification came; it still
		// is if the notification is pending.
		if !r.Valid() {
			unix.Close(pidfd)
			return -1, ErrGone
		}
		r.pidfd = pidfd
	}
	return unix.PidfdGetfd(r.pidfd, fd, 0)
}

func (r *Request) close() {
	if r.pidfd > 0 {
		unix.Close(r.pidfd)
	}
}
