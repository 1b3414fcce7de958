package initstage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// stdioNames are the descriptors the command inherits, by number.
var stdioNames = [...]string{"standard input", "standard output", "standard error"}

// checkStdio refuses a Unix datagram socket among the descriptors the
// command inherits. sendto() with a path overrides such a socket's peer,
// so through it the command could deliver datagrams to any host Unix
// socket it can name (syslog, journald, notify sockets), which the seccomp
// rule on socket() never sees. Stream and seqpacket sockets ignore a
// destination address once connected, so they stay usable (supervisors
// hand their children socketpairs). Everything else the command inherits
// is closed before it starts.
func checkStdio() error {
	for fd, name := range stdioNames {
		domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
		if err != nil {
			continue // not a socket (ENOTSOCK), or closed (EBADF)
		}
		typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		if err != nil {
			return fmt.Errorf("%s is a socket whose type cannot be read: %w", name, err)
		}
		if domain == unix.AF_UNIX && typ == unix.SOCK_DGRAM {
			return fmt.Errorf("%s is a Unix datagram socket, through which the command could send to any Unix socket on the host; give the command a pipe, a file or a stream socket instead (or set network.allowAllUnixSockets, which allows every Unix socket)", name)
		}
	}
	return nil
}
