//go:build linux

package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks of the second fresh review of issue 10 (escape_review2_test.go).
func init() {
	// r2-sendto-stdin-inet ADDR PORT: send a UDP datagram to ADDR:PORT
	// through the socket the probe inherited as its standard input (an
	// AF_INET socket belongs to the host's network namespace, wherever it
	// is used).
	register("r2-sendto-stdin-inet", 2, func(a []string) {
		port, _ := strconv.Atoi(a[1])
		report("r2-sendto-inet", unix.Sendto(0, []byte("PROBE-R2-DGRAM"), 0, &unix.SockaddrInet4{Port: port, Addr: netip.MustParseAddr(a[0]).As4()}))
	})
	// r2-connect-stdin-unix PATH: connect the (unconnected) stream socket
	// inherited as standard input to the Unix socket at PATH and write.
	register("r2-connect-stdin-unix", 1, func(a []string) {
		if report("r2-connect-unix", unix.Connect(0, &unix.SockaddrUnix{Name: a[0]})) {
			_, err := unix.Write(0, []byte("PROBE-R2-STREAM"))
			report("r2-write", err)
		}
	})
	// r2-connect-stdin-inet ADDR PORT: connect the (unconnected) TCP
	// socket inherited as standard input to ADDR:PORT and write.
	register("r2-connect-stdin-inet", 2, func(a []string) {
		port, _ := strconv.Atoi(a[1])
		if report("r2-connect-inet", unix.Connect(0, &unix.SockaddrInet4{Port: port, Addr: netip.MustParseAddr(a[0]).As4()})) {
			_, err := unix.Write(0, []byte("PROBE-R2-STREAM"))
			report("r2-write", err)
		}
	})
	// r2-reconnect-stdin-inet ADDR PORT: disconnect the TCP socket
	// inherited as standard input (connect with AF_UNSPEC), connect it to
	// ADDR:PORT and write: a connected socket is no safer than an
	// unconnected one.
	register("r2-reconnect-stdin-inet", 2, func(a []string) {
		port, _ := strconv.Atoi(a[1])
		unspec := [16]byte{} // struct sockaddr with sa_family AF_UNSPEC
		_, _, errno := unix.Syscall(unix.SYS_CONNECT, 0, uintptr(unsafe.Pointer(&unspec[0])), uintptr(len(unspec)))
		var err error
		if errno != 0 {
			err = errno
		}
		report("r2-disconnect", err)
		if report("r2-connect-inet", unix.Connect(0, &unix.SockaddrInet4{Port: port, Addr: netip.MustParseAddr(a[0]).As4()})) {
			_, err := unix.Write(0, []byte("PROBE-R2-STREAM"))
			report("r2-write", err)
		}
	})
	// r2-read-at-stdin NAME: open NAME relative to the directory inherited
	// as standard input and print what it holds.
	register("r2-read-at-stdin", 1, func(a []string) {
		fd, err := unix.Openat(0, a[0], unix.O_RDONLY, 0)
		if !report("r2-openat", err) {
			return
		}
		buf := make([]byte, 256)
		n, err := unix.Read(fd, buf)
		if report("r2-read", err) {
			fmt.Printf("DATA %s\n", buf[:n])
		}
	})
}
