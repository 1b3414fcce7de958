package initstage

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// chanMu makes each message one write on the channel: the command's
// start and end, violations and connection answers come from several
// goroutines.
var chanMu sync.Mutex

// send writes one message to srt, with fd attached when it is not -1.
func send(msg []byte, fd int) error {
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	chanMu.Lock()
	defer chanMu.Unlock()
	for {
		err := unix.Sendmsg(ChannelFD, msg, oob, nil, 0)
		if err != unix.EINTR {
			return err
		}
	}
}

// reportViolation tells srt of a violation the init stage saw; srt
// records it as the command's. A line over MaxViolation is cut.
func reportViolation(line string) {
	if len(line) > MaxViolation {
		line = line[:MaxViolation]
	}
	if line == "" {
		return
	}
	msg := make([]byte, 3, 3+len(line))
	msg[0] = MsgViolation
	binary.BigEndian.PutUint16(msg[1:], uint16(len(line)))
	send(append(msg, line...), -1)
}

// control reads what srt sends on the channel: signals to forward,
// CtlNetworkReady and CtlConnect with its port, which may arrive split
// across reads.
type control struct {
	pending []byte // a CtlConnect whose port has not all arrived
}

// feed takes the bytes of one read and calls signal, ready and connect
// for what they hold, in order.
func (c *control) feed(b []byte, signal func(byte), ready func(), connect func(port uint16)) {
	for len(b) > 0 {
		if len(c.pending) > 0 {
			need := 3 - len(c.pending)
			if len(b) < need {
				c.pending = append(c.pending, b...)
				return
			}
			c.pending = append(c.pending, b[:need]...)
			b = b[need:]
			connect(binary.BigEndian.Uint16(c.pending[1:]))
			c.pending = c.pending[:0]
			continue
		}
		switch b[0] {
		case CtlNetworkReady:
			ready()
		case CtlConnect:
			c.pending = append(c.pending, b[0])
		default:
			signal(b[0])
		}
		b = b[1:]
	}
}

// connectLoopback connects to port on the sandbox's loopback, 127.0.0.1
// first, then ::1, and answers srt with the socket or the error. It runs
// with the init stage's own limits (its seccomp filter allows IP sockets;
// the sandbox's network namespace has only its loopback).
func connectLoopback(port uint16) {
	fd, err := dialLoopback(port)
	msg := []byte{MsgConnected, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(msg[1:], port)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) || errno == 0 {
			errno = unix.EIO
		}
		binary.BigEndian.PutUint16(msg[3:], uint16(errno))
		send(msg, -1)
		return
	}
	send(msg, fd)
	unix.Close(fd)
}

func dialLoopback(port uint16) (int, error) {
	try := func(family int, sa unix.Sockaddr) (int, error) {
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		for {
			err = unix.Connect(fd, sa)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		return fd, nil
	}
	fd, err := try(unix.AF_INET, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
	if err == nil {
		return fd, nil
	}
	if fd6, err6 := try(unix.AF_INET6, &unix.SockaddrInet6{Port: int(port), Addr: [16]byte{15: 1}}); err6 == nil {
		return fd6, nil
	}
	return -1, err
}

// listenerPoll is how often watchListeners looks for new servers.
const listenerPoll = 200 * time.Millisecond

// maxWatched bounds the ports reported: a command that listens on more is
// not followed further.
const maxWatched = 256

// watchListeners reports, once each, every TCP port a server of the
// sandbox listens on, on its loopback or on every address, IPv4 or IPv6
// (/proc/self/net/tcp and tcp6 list this network namespace's sockets),
// but for ignore. It runs for the command's life.
func watchListeners(ignore []int) {
	seen := map[uint16]bool{}
	for _, p := range ignore {
		seen[uint16(p)] = true
	}
	reported := 0
	for reported < maxWatched {
		for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, port := range loopbackListeners(data) {
				if !seen[port] && reported < maxWatched {
					seen[port] = true
					reported++
					msg := []byte{MsgListening, 0, 0}
					binary.BigEndian.PutUint16(msg[1:], port)
					send(msg, -1)
				}
			}
		}
		time.Sleep(listenerPoll)
	}
}

// loopbackListeners are the ports of the listening sockets of a
// /proc/net/tcp or tcp6 table bound to a loopback address or to every
// address.
func loopbackListeners(table []byte) []uint16 {
	var ports []uint16
	lines := strings.Split(string(table), "\n")
	for _, line := range lines[min(1, len(lines)):] {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" { // TCP_LISTEN
			continue
		}
		addr, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil || port == 0 {
			continue
		}
		switch {
		case len(addr) == 8 && (addr == "00000000" || strings.HasSuffix(addr, "7F")): // 0.0.0.0, 127.x.x.x (little-endian words)
		case addr == "00000000000000000000000000000000", addr == "00000000000000000000000001000000": // ::, ::1
		case len(addr) == 32 && strings.HasPrefix(addr, "0000000000000000FFFF0000") && (strings.HasSuffix(addr, "7F") || strings.HasSuffix(addr, "00000000")): // ::ffff:127.x, ::ffff:0.0.0.0
		default:
			continue
		}
		ports = append(ports, uint16(port))
	}
	return ports
}
