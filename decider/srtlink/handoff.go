package srtlink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// Receiver reads messages and the files that came with them.
type Receiver struct {
	c       *net.UnixConn
	buf     []byte
	pending []*os.File
}

// NewReceiver reads from c.
func NewReceiver(c *net.UnixConn) *Receiver { return &Receiver{c: c} }

// Receive returns the next message and its files: those that arrived
// since the previous message's line ended.
func (r *Receiver) Receive() (Message, []*os.File, error) {
	for {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			line := r.buf[:i]
			r.buf = r.buf[i+1:]
			m, err := Decode(line)
			if err != nil {
				return Message{}, nil, fmt.Errorf("handoff: %w", err)
			}
			files := r.pending
			r.pending = nil
			return m, files, nil
		}
		b := make([]byte, 4096)
		oob := make([]byte, unix.CmsgSpace(64*4))
		n, oobn, _, _, err := r.c.ReadMsgUnix(b, oob)
		r.buf = append(r.buf, b[:n]...)
		if oobn > 0 {
			msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
			if perr == nil {
				for _, cm := range msgs {
					fds, ferr := unix.ParseUnixRights(&cm)
					if ferr != nil {
						continue
					}
					for _, fd := range fds {
						r.pending = append(r.pending, os.NewFile(uintptr(fd), "listener"))
					}
				}
			}
		}
		if err != nil {
			if n > 0 {
				continue
			}
			return Message{}, nil, err
		}
		if n == 0 && oobn == 0 {
			return Message{}, nil, errors.New("handoff: end of stream")
		}
	}
}
