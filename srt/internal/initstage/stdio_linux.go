package initstage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// checkStdio refuses a descriptor among the ones the command inherits
// (everything else is closed before it starts) that leads out of the
// sandbox past its rules. Each was found by a hostile review:
//
//   - a directory: openat() relative to it walks the host's own mount, past
//     every mount the plan made (denied files included);
//   - a network socket: it belongs to the host's network namespace, so a
//     datagram one sends anywhere, and a stream one, even connected or
//     listening, can be disconnected (connect with AF_UNSPEC) and connected
//     anywhere, past srt's proxy;
//   - a Unix datagram socket: sendto() with a path overrides its peer, so it
//     reaches every host Unix socket (syslog, journald, notify sockets);
//   - an unconnected Unix stream or seqpacket socket: connect() reaches any
//     host Unix socket (docker.sock, the session bus). A connected or
//     listening one cannot be turned to another peer, so it stays usable
//     (supervisors hand their children socketpairs);
//   - any other socket (netlink, packet, vsock).
//
// allUnix (network.allowAllUnixSockets) lets every Unix socket through, as
// the command could make its own then.
func checkStdio(allUnix bool, passed []PassFD) error {
	type named struct {
		fd   int
		name string
	}
	var fds []named
	for fd, name := range StdioNames {
		fds = append(fds, named{fd, name})
	}
	for _, p := range passed {
		fds = append(fds, named{p.From, PassName(p.To)})
	}
	for _, d := range fds {
		fd, name := d.fd, d.name
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			continue // closed
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return fmt.Errorf("%s is a directory, through which the command could open the files beneath it past every filesystem rule; give the command a file, a pipe or a terminal instead", name)
		case unix.S_IFSOCK:
			if why := socketLeak(fd, allUnix); why != "" {
				return fmt.Errorf("%s is %s; give the command a pipe, a file or a connected Unix stream socket instead", name, why)
			}
		}
	}
	return nil
}

// socketLeak says how the socket fd leads out of the sandbox, or "" when
// it does not.
func socketLeak(fd int, allUnix bool) string {
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return "a socket whose family cannot be read (" + err.Error() + ")"
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return "a socket whose type cannot be read (" + err.Error() + ")"
	}
	switch domain {
	case unix.AF_UNIX:
		if allUnix {
			return ""
		}
		if typ == unix.SOCK_DGRAM {
			return "a Unix datagram socket, through which the command could send to any Unix socket on the host (or set network.allowAllUnixSockets, which allows every Unix socket)"
		}
		if listening, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); listening == 1 {
			return ""
		}
		if _, err := unix.Getpeername(fd); err == nil {
			return ""
		}
		return "an unconnected Unix socket, which the command could connect to any Unix socket on the host (or set network.allowAllUnixSockets, which allows every Unix socket)"
	case unix.AF_INET, unix.AF_INET6:
		return "a network socket of the host's, through which the command could reach any address past srt's proxy (even a connected or listening one can be disconnected and connected elsewhere)"
	}
	return fmt.Sprintf("a socket of family %d, which reaches outside the sandbox", domain)
}
