//go:build linux

package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks on the sockets that reach past the network namespace: Unix
// sockets on the filesystem (docker.sock, the session bus), vsock (the
// hypervisor), io_uring (which makes sockets without socket(2)), and the
// host's abstract Unix namespace.
func init() {
	register("socket-unix", 0, func([]string) { report("socket-unix", socket(unix.AF_UNIX)) })
	register("socket-vsock", 0, func([]string) { report("socket-vsock", socket(unix.AF_VSOCK)) })
	register("io-uring", 0, func([]string) { report("io-uring", ioUringSetup()) })
	register("connect-abstract", 1, func(a []string) {
		// A leading NUL (Go spells it '@') names the abstract namespace.
		report("connect-abstract", connectUnix("@"+a[0]))
	})
	register("connect-unix", 1, func(a []string) { report("connect-unix", connectUnix(a[0])) })
}

func socket(domain int) error {
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// ioUringSetup creates a one-entry ring (struct io_uring_params is 120 bytes).
func ioUringSetup() error {
	var params [120]byte
	fd, _, errno := syscall.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	if errno != 0 {
		return errno
	}
	unix.Close(int(fd))
	return nil
}

// connectUnix connects a stream socket to a Unix address; the first step
// that fails is the outcome.
func connectUnix(addr string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: addr})
}
