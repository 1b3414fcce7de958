package initstage

import (
	"encoding/binary"
	"errors"
	"sync"

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
