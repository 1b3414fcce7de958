//go:build linux

package main

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// refusingThread runs functions on one OS thread whose seccomp filter
// makes socket(AF_NETLINK, *, protocol) fail with EPROTONOSUPPORT, as on
// a kernel built without that netlink family; everything else is allowed.
// Programs started from the thread inherit the filter (and, for a user
// other than root, no_new_privs, which a filter needs). With
// NETLINK_NETFILTER, srt's namespace helper finds no nftables and capture
// is off; with a protocol no kernel has, the same filter refuses nothing
// srt uses, so that both sides pay for a filter. The thread is never
// handed back to Go's scheduler; it ends with close.
type refusingThread struct {
	jobs chan func()
}

// netlinkUnused is a netlink protocol number no kernel assigns (they end
// at MAX_LINKS, 32).
const netlinkUnused = 31

// newRefusingThread makes the thread, or says why it cannot.
func newRefusingThread(protocol uint32) (*refusingThread, error) {
	prog, err := refuseNetlink(protocol)
	if err != nil {
		return nil, err
	}
	t := &refusingThread{jobs: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if os.Geteuid() != 0 {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				ready <- fmt.Errorf("no_new_privs: %w", err)
				return
			}
		}
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		// This thread only (no SECCOMP_FILTER_FLAG_TSYNC), and without
		// the speculative-store-bypass mitigation a filter turns on by
		// default, which slows every program after it.
		if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_SPEC_ALLOW, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
			ready <- fmt.Errorf("seccomp: %w", errno)
			return
		}
		ready <- nil
		for job := range t.jobs {
			job()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return t, nil
}

// refuseNetlink is the filter: socket(AF_NETLINK, *, protocol) fails with
// EPROTONOSUPPORT, every other call of this architecture goes through.
// (The arguments are read as their low 32 bits: seccomp_data's args[i]
// at 16+8i, little-endian.)
func refuseNetlink(protocol uint32) ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("no seccomp filter written for %s", runtime.GOARCH)
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
	)
	return []unix.SockFilter{
		{Code: ld, K: 4}, // arch
		{Code: jeq, K: arch, Jf: 7},
		{Code: ld, K: 0}, // nr
		{Code: jeq, K: unix.SYS_SOCKET, Jf: 5},
		{Code: ld, K: 16}, // domain
		{Code: jeq, K: unix.AF_NETLINK, Jf: 3},
		{Code: ld, K: 32}, // protocol
		{Code: jeq, K: protocol, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)},
		{Code: ret, K: allow},
	}, nil
}

// do runs f on the thread and returns when it has.
func (t *refusingThread) do(f func()) {
	done := make(chan struct{})
	t.jobs <- func() { f(); close(done) }
	<-done
}

func (t *refusingThread) close() { close(t.jobs) }
