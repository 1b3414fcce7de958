// Package handoff is how srt gives srt-proxy the listening sockets of each
// sandbox it starts, and takes them back when the sandbox ends: one JSON
// object per line on a Unix socket pair, the sockets riding along as
// SCM_RIGHTS. The end of the stream means srt is gone, and srt-proxy stops.
// A "listen" with a relay hands over sockets whose connections srt-proxy
// relays byte for byte to an external proxy on this host's localhost
// (network.httpProxyPort, socksProxyPort) instead of serving them.
//
// The other way, srt-proxy sends one line once it has started: "ready"
// when it serves (the decider said hello; the CA is loaded and the trust
// bundle written when it terminates TLS), or "failed" with what went
// wrong, and then it exits. srt waits for that line before it uses the
// proxy (srt/internal/egress). Started without a decider (srt does so when
// every sandbox port is relayed), srt-proxy only relays, and is ready at
// once.
//
// A "listen" with a role hands over the sockets of the sandbox's network
// namespace (docs/architecture.md, "Captured connections and the sandbox's
// name server"): role "capture" sockets listen where the namespace's NAT
// rules send every TCP connection the sandbox makes to an address outside
// it (and to the loopback ports of allowedDomains entries), and srt-proxy
// decides each like a CONNECT to its original destination; role "dns"
// sockets (one UDP, one TCP) are the sandbox's name server, which answers A
// and AAAA with addresses of a fake range that srt-proxy maps back to the
// name. "user" is the attribution user of the sandbox ("srt.<label>", what
// its proxy credentials carry); "loopback" maps an original loopback
// destination ("127.0.0.1:8765", "[::1]:8765") to the host an
// allowedDomains entry named it by ("localhost"); a destination it does not
// list is asked about as its IP literal. srt sends one "listen" per role
// (Egress.AddCapture); "close" closes them with the sandbox's other
// sockets.
//
//	srt                                           srt-proxy
//	  │                                              │ TLS set-up, decider hello
//	  │ ◀── {"t":"ready"} ─────────────────────────── │
//	  │      or {"t":"failed","error":"tlsTerminate: …","setting":"tlsTerminate"}
//	  │ ── {"t":"listen","id":"…"} + SCM_RIGHTS ─────▶ │ serves them
//	  │ ── {"t":"listen","id":"…","relay":{"port":8080,"setting":"httpProxyPort"}}
//	  │                           + SCM_RIGHTS ─────▶ │ relays them to localhost:8080
//	  │ ── {"t":"listen","id":"…","role":"capture","user":"srt.…",
//	  │       "loopback":{"127.0.0.1:8765":"localhost"}} + SCM_RIGHTS ─▶ │ decides every connection
//	  │ ── {"t":"listen","id":"…","role":"dns"}
//	  │                           + SCM_RIGHTS ─────▶ │ answers DNS (UDP and TCP)
//	  │ ── {"t":"close","id":"…"} ──────────────────▶ │ closes them
//	  │ ── {"t":"sync","q":N} ──────────────────────▶ │ ── sync {id N} ──▶ decider ── sync {q N} ──▶ srt
//	  │ ── end of stream ───────────────────────────▶ │ stops
package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Message is one line.
type Message struct {
	T  string `json:"t"`            // "listen" (with sockets), "close" or "sync"; from srt-proxy "ready" or "failed"
	ID string `json:"id,omitempty"` // the sandbox
	// Q is a sync's id: srt-proxy passes it to the decider behind every
	// message it sent before (protocol.Sync), and the decider tells srt.
	Q uint64 `json:"q,omitempty"`
	// Error is why srt-proxy could not start ("failed").
	Error string `json:"error,omitempty"`
	// Setting names the settings key at fault when the failure is a
	// settings error ("tlsTerminate"): srt reports it as one.
	Setting string `json:"setting,omitempty"`
	// Relay, on a "listen", says where its sockets' connections go
	// instead of srt-proxy's own proxy.
	Relay *Relay `json:"relay,omitempty"`
	// Role, on a "listen", says what its sockets are: RoleProxy (the
	// sandbox's HTTP and SOCKS proxy port), RoleCapture or RoleDNS.
	Role string `json:"role,omitempty"`
	// User, on a "listen" of RoleCapture, is the attribution user of the
	// sandbox's connections ("srt.<label>"); "" asks as no user.
	User string `json:"user,omitempty"`
	// Loopback, on a "listen" of RoleCapture, maps an original loopback
	// destination ("127.0.0.1:8765", "[::1]:8765") to the host name to ask
	// about ("localhost"); a destination it does not list is asked about
	// as its IP literal.
	Loopback map[string]string `json:"loopback,omitempty"`
}

// The roles of a "listen".
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

// Ready tells srt that srt-proxy serves.
func Ready(c *net.UnixConn) error { return Send(c, Message{T: "ready"}, nil) }

// Failed tells srt why srt-proxy could not start; setting is the
// settings key at fault, or "".
func Failed(c *net.UnixConn, setting string, err error) error {
	return Send(c, Message{T: "failed", Error: err.Error(), Setting: setting}, nil)
}

// Send writes m with files attached.
func Send(c *net.UnixConn, m Message, files []*os.File) error {
	b, err := json.Marshal(m)
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
	_, _, err = c.WriteMsgUnix(append(b, '\n'), oob, nil)
	return err
}

// Receiver reads messages and the files that came with them.
type Receiver struct {
	c       *net.UnixConn
	buf     []byte
	pending []*os.File
}

// NewReceiver reads from c.
func NewReceiver(c *net.UnixConn) *Receiver { return &Receiver{c: c} }

// Receive returns the next message and its files.
func (r *Receiver) Receive() (Message, []*os.File, error) {
	for {
		if i := indexNewline(r.buf); i >= 0 {
			line := r.buf[:i]
			r.buf = r.buf[i+1:]
			var m Message
			if err := json.Unmarshal(line, &m); err != nil {
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

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}
