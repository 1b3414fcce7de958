// Package control is the private channel between srt and the reference
// decider it starts: one JSON object per line over a socket pair. srt sends
// the network settings (at start and on every live update), per-command
// allow lists, and answers to the ask callback; the decider sends the
// violations it records and the questions for the ask callback.
//
// Unlike the decider protocol, this channel is internal: both ends come
// from the same srt release, so it is decoded with encoding/json and a
// message it does not know is an error.
//
//	srt                                   decider
//	  │ ── config {network, ask} ────────────▶ │  (before the proxy's hello is answered)
//	  │ ── register {id, allowedDomains} ────▶ │
//	  │ ◀── ask {q, host, port, user} ─────────│  (only with an ask callback)
//	  │ ── answer {q, allow, reason} ────────▶ │
//	  │ ◀── violation {line, user} ────────────│
//	  │ ── sync {q} ─────────────────────────▶ │
//	  │ ◀── sync {q} ──────────────────────────│  (every earlier message has arrived)
//	  │ ── sync {q} via srt-proxy (handoff, then the decider protocol's sync) ─▶ │
//	  │ ◀── sync {q} ──────────────────────────│  (and every earlier message of the proxy)
package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Network is the part of the settings the decider applies.
type Network struct {
	AllowedDomains          []string          `json:"allowedDomains"`
	DeniedDomains           []string          `json:"deniedDomains"`
	DeniedDomainReasons     map[string]string `json:"deniedDomainReasons,omitempty"`
	StrictAllowlist         bool              `json:"strictAllowlist,omitempty"`
	DeniedResolvedAddresses []string          `json:"deniedResolvedAddresses,omitempty"`
}

// Message is one line of the channel. T says which fields matter.
type Message struct {
	T string `json:"t"`
	// config
	Network *Network `json:"network,omitempty"`
	Ask     bool     `json:"ask,omitempty"` // the host has an ask callback
	// register, unregister
	ID             string   `json:"id,omitempty"`
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// ask, answer
	Q      uint64 `json:"q,omitempty"`
	Host   string `json:"host,omitempty"`
	Port   int    `json:"port,omitempty"`
	Allow  bool   `json:"allow,omitempty"`
	Reason string `json:"reason,omitempty"`
	// ask, violation
	User string `json:"user,omitempty"`
	Line string `json:"line,omitempty"`
	// masks (with ID, the command's key as in register)
	Masks []Mask `json:"masks,omitempty"`
}

// Mask is one masked secret of a command (TMasks): the decider gives it to
// the proxy (protocol.Masks) and names it in the allows of that command's
// requests to a host InjectHosts matches.
type Mask struct {
	ID          string   `json:"id"`
	Sentinel    string   `json:"sentinel"`
	Value       string   `json:"value"`
	InjectHosts []string `json:"injectHosts"` // domain patterns, no ports
	AWSPair     string   `json:"awsPair,omitempty"`
	AWSRole     string   `json:"awsRole,omitempty"` // protocol.AWSAccessKeyID …
}

// Message types.
const (
	TConfig     = "config"
	TRegister   = "register"
	TUnregister = "unregister"
	TAnswer     = "answer"
	TAsk        = "ask"
	TViolation  = "violation"
	TMasks      = "masks"
	// TSync asks the decider to echo Q once everything it sent before is
	// sent: the violations of a finished command have all arrived then.
	TSync = "sync"
)

// maxLine bounds one line, its newline included.
const maxLine = 4 << 20

// Conn reads and writes messages.
type Conn struct {
	sc   *bufio.Scanner
	rerr error // the stream's failure, once the framing is lost
	mu   sync.Mutex
	w    io.Writer
}

// New wraps a stream.
func New(rw io.ReadWriter) *Conn {
	sc := bufio.NewScanner(rw)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &Conn{sc: sc, w: rw}
}

// Read returns the next message (io.EOF at the end). A line that is not a
// message is an error, and the next Read goes on with the next line; a
// failed stream, or a line over the limit, fails every later Read too.
func (c *Conn) Read() (*Message, error) {
	if c.rerr != nil {
		return nil, c.rerr
	}
	if !c.sc.Scan() {
		if err := c.sc.Err(); err != nil {
			// Sticky: after an overlong line the scanner would hand out
			// the part of it that fits as if it were a line.
			c.rerr = err
			return nil, err
		}
		return nil, io.EOF
	}
	var m Message
	if err := json.Unmarshal(c.sc.Bytes(), &m); err != nil {
		return nil, &messageError{err}
	}
	switch m.T {
	case TConfig, TRegister, TUnregister, TAnswer, TAsk, TViolation, TSync, TMasks:
	default:
		return nil, &messageError{fmt.Errorf("unknown message %q", m.T)}
	}
	return &m, nil
}

// ErrMessage is matched (errors.Is) by Read's error for one line it could
// not read as a message: the stream goes on, and the next Read reads the
// next line. Any other error ends the stream.
var ErrMessage = errors.New("control: a line that is not a message")

// messageError is one line Read could not take; it matches ErrMessage.
type messageError struct{ err error }

func (e *messageError) Error() string        { return "control: " + e.err.Error() }
func (e *messageError) Unwrap() error        { return e.err }
func (e *messageError) Is(target error) bool { return target == ErrMessage }

// Write sends one message; safe for concurrent use.
func (c *Conn) Write(m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(append(b, '\n'))
	return err
}
