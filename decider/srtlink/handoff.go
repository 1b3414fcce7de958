package srtlink

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Message is one line of the handoff channel.
type Message struct {
	T  string `json:"t"`            // TListen (with sockets), TClose or TSync; from srt-proxy TReady or TFailed
	ID string `json:"id,omitempty"` // the sandbox
	// Q is a sync's id: srt-proxy passes it to the decider behind every
	// message it sent before (protocol.Sync), and the decider tells srt.
	Q uint64 `json:"q,omitempty"`
	// Error is why srt-proxy could not start (TFailed).
	Error string `json:"error,omitempty"`
	// Setting names the settings key at fault when the failure is a
	// settings error ("tlsTerminate"): srt reports it as one.
	Setting string `json:"setting,omitempty"`
	// Relay, on a TListen, says where its sockets' connections go
	// instead of srt-proxy's own proxy.
	Relay *Relay `json:"relay,omitempty"`
	// Role, on a TListen, says what its sockets are: RoleProxy (the
	// sandbox's HTTP and SOCKS proxy port), RoleCapture or RoleDNS.
	Role string `json:"role,omitempty"`
	// User, on a TListen of RoleCapture, is the attribution user of the
	// sandbox's connections (UserFor); "" asks as no user.
	User string `json:"user,omitempty"`
	// Loopback, on a TListen of RoleCapture, maps an original loopback
	// destination ("127.0.0.1:8765", "[::1]:8765") to the host name to ask
	// about ("localhost"); a destination it does not list is asked about
	// as its IP literal.
	Loopback map[string]string `json:"loopback,omitempty"`
}

// The message types.
const (
	TListen = "listen" // srt → srt-proxy, with sockets: serve them
	TClose  = "close"  // srt → srt-proxy: close a sandbox's sockets
	TSync   = "sync"   // srt → srt-proxy → decider → srt: every earlier refusal is recorded
	TReady  = "ready"  // srt-proxy → srt: it serves
	TFailed = "failed" // srt-proxy → srt: it could not start, and exits
)

// The roles of a TListen.
const (
	RoleProxy   = ""        // HTTP and SOCKS5 proxy listeners
	RoleCapture = "capture" // TCP listeners the sandbox's NAT rules redirect to
	RoleDNS     = "dns"     // the sandbox's name server: a UDP socket and a TCP listener
)

// Relay is an external proxy that a sandbox's proxy port stands for.
type Relay struct {
	// Port is the external proxy's port on this host's localhost.
	Port int `json:"port"`
	// Setting is the settings key that names it ("httpProxyPort",
	// "socksProxyPort"), for srt-proxy's warning when nothing listens
	// there.
	Setting string `json:"setting"`
}

// Encode is m's line, with its newline.
func Encode(m Message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Decode reads one line (without its newline).
func Decode(line []byte) (Message, error) {
	var m Message
	err := json.Unmarshal(line, &m)
	return m, err
}

// Send writes m with files attached.
func Send(c *net.UnixConn, m Message, files []*os.File) error {
	line, err := Encode(m)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	_, _, err = c.WriteMsgUnix(line, oob, nil)
	return err
}

// Ready tells srt that srt-proxy serves.
func Ready(c *net.UnixConn) error { return Send(c, Message{T: TReady}, nil) }

// Failed tells srt why srt-proxy could not start; setting is the
// settings key at fault, or "".
func Failed(c *net.UnixConn, setting string, err error) error {
	return Send(c, Message{T: TFailed, Error: err.Error(), Setting: setting}, nil)
}

// ErrEndOfStream is Receive's error once the sender has closed its end:
// for srt-proxy, srt is gone.
var ErrEndOfStream = errors.New("handoff: end of stream")

// maxFiles is the most descriptors one message may carry (srt sends at
// most a handful).
const maxFiles = 64

// Receiver reads messages and the files that came with them.
type Receiver struct {
	c       *net.UnixConn
	b, oob  []byte
	pending []*os.File
}

// NewReceiver reads from c.
func NewReceiver(c *net.UnixConn) *Receiver {
	return &Receiver{c: c, b: make([]byte, 1), oob: make([]byte, unix.CmsgSpace(maxFiles*4))}
}

// Receive returns the next message and the files sent with it. A line that
// does not decode, and descriptors the kernel had to drop (more than
// maxFiles at once), are errors, and the files that came with them are
// closed: a receiver must not serve fewer sockets than it was handed
// without knowing it.
//
// It reads one byte at a time. A stream socket keeps no message
// boundaries, and the kernel delivers a message's descriptors with the
// read that returns its first byte (BSD) or that ends with its bytes
// (Linux joins the lines queued before it into that read): a read of
// many lines cannot tell which line they came with, and giving them to
// its first line handed one sandbox's listeners to another's close. A read
// of one byte can: they are its line's. The channel carries a few short
// lines per sandbox.
func (r *Receiver) Receive() (Message, []*os.File, error) {
	var line []byte
	var ferr error
	for {
		n, oobn, flags, _, err := r.c.ReadMsgUnix(r.b, r.oob)
		if e := r.takeFiles(r.oob[:oobn], flags); e != nil && ferr == nil {
			ferr = e
		}
		if n > 0 && r.b[0] == '\n' {
			files := r.pending
			r.pending = nil
			if ferr != nil {
				closeFiles(files)
				return Message{}, nil, ferr
			}
			m, err := Decode(line)
			if err != nil {
				closeFiles(files)
				return Message{}, nil, fmt.Errorf("handoff: %w", err)
			}
			return m, files, nil
		}
		line = append(line, r.b[:n]...)
		if err != nil {
			if n > 0 {
				continue
			}
			closeFiles(r.pending)
			r.pending = nil
			if errors.Is(err, io.EOF) {
				err = ErrEndOfStream
			}
			if ferr != nil {
				err = ferr
			}
			return Message{}, nil, err
		}
		if n == 0 && oobn == 0 {
			closeFiles(r.pending)
			r.pending = nil
			if ferr != nil {
				return Message{}, nil, ferr
			}
			return Message{}, nil, ErrEndOfStream
		}
	}
}

// takeFiles adds the descriptors of a read's control messages to those
// pending. It fails when they cannot all be had: a control message that
// does not parse, or descriptors the kernel dropped for want of room.
func (r *Receiver) takeFiles(oob []byte, flags int) error {
	if len(oob) > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob)
		for _, cm := range msgs {
			fds, ferr := unix.ParseUnixRights(&cm)
			if ferr != nil {
				continue // not SCM_RIGHTS
			}
			for _, fd := range fds {
				r.pending = append(r.pending, os.NewFile(uintptr(fd), "listener"))
			}
		}
		if err != nil {
			return fmt.Errorf("handoff: descriptors: %w", err)
		}
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return fmt.Errorf("handoff: more than %d descriptors in one message: the kernel dropped the rest", maxFiles)
	}
	return nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
