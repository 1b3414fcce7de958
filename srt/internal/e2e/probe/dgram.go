//go:build linux

package main

import (
	"golang.org/x/sys/unix"
)

// Attacks on a host datagram socket (syslog, journald, a notify socket)
// reached by path: socket(AF_UNIX) is refused, but a socket from
// socketpair(2) can send too, with sendto(2) and a destination. The
// payload of each step names it, so the test sees which one arrived.
func init() {
	register("dgram-send", 1, func(a []string) {
		dst := &unix.SockaddrUnix{Name: a[0]}
		for _, c := range []struct {
			name string
			typ  int
		}{{"dgram", unix.SOCK_DGRAM}, {"raw", unix.SOCK_RAW}, {"seqpacket", unix.SOCK_SEQPACKET}, {"stream", unix.SOCK_STREAM}} {
			fds, err := unix.Socketpair(unix.AF_UNIX, c.typ|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
			if !report("socketpair-"+c.name, err) {
				continue
			}
			report("sendto-"+c.name, unix.Sendto(fds[0], []byte("srt-probe-"+c.name), 0, dst))
			// A stream or seqpacket pair sends to its peer whatever the
			// address says: the datagram stayed in the sandbox.
			buf := make([]byte, 64)
			if n, _, err := unix.Recvfrom(fds[1], buf, 0); err == nil {
				note("%s peer got %q", c.name, buf[:n])
				reportWord("peer-"+c.name, "got")
			} else {
				reportWord("peer-"+c.name, "empty")
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	})
}
