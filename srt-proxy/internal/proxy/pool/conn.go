// Package pool is srt-proxy's upstream connections: a kept-alive upstream
// connection (Conn: is it still alive, a response head bounded), the pool
// that keeps plain-HTTP ones for any client connection to reuse (Pool:
// opened by dial.Dialer, reused only under the address policy they were
// checked under, reaped when the upstream closes them while idle), and how
// a failed upstream leg is told to the client (Describe).
package pool

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
)

// Conn is an upstream connection kept alive between requests: a
// terminated tunnel's TLS connection, or a pooled plain-HTTP one (TCP to
// the destination or to the parent proxy, or TLS to an https://
// destination).
type Conn struct {
	Net  net.Conn   // requests are written to it, responses read from it
	raw  net.Conn   // the TCP connection under it (Net itself without TLS)
	Bulk *bulk.Conn // between TLS and raw in a terminated tunnel; nil otherwise
	lim  headLimit  // between Net and BR: bounds a response head
	BR   *bufio.Reader
	BW   *bufio.Writer
	Addr string // the address dialled, for the record
	// Parent is the parent proxy the connection goes to: requests are
	// sent in absolute form with its credentials. nil: origin form.
	Parent *url.URL
	Used   bool // it has carried a request: a failure may be its idle close

	// The pool's: where it belongs, the address policy its address was
	// checked under, and the timer that closes it when idle too long.
	key     Key
	policy  any // dial.Dialer.Policy's result, compared by identity
	expiry  *time.Timer
	watched chan struct{} // closed when the idle watch ends; nil: not watched (Pool.watch)
}

// NewConn is a kept connection over c (TLS, or raw itself), whose TCP
// connection is raw, dialled at addr.
func NewConn(c, raw net.Conn, addr string) *Conn {
	u := &Conn{Net: c, raw: raw, BW: bufio.NewWriterSize(c, 4096), Addr: addr}
	u.lim.r = c
	u.BR = bufio.NewReaderSize(&u.lim, 4096)
	return u
}

// Close closes the connection.
func (u *Conn) Close() { u.Net.Close() }

// ArmHeadLimit bounds what is read next (a response head, with its
// interim answers) to maxResponseHead; DisarmHeadLimit lifts the bound.
func (u *Conn) ArmHeadLimit()    { u.lim.arm() }
func (u *Conn) DisarmHeadLimit() { u.lim.disarm() }

// Alive reports whether a kept connection can carry another request: the
// upstream has not closed it (a close_notify or a FIN) and sent nothing
// unasked. Bytes already read are looked at first; under TLS, records TLS
// holds, without waiting; then the socket, without reading from it.
func (u *Conn) Alive() bool {
	if u.BR.Buffered() > 0 || u.Bulk != nil && u.Bulk.Buffered() {
		return false
	}
	if _, isTLS := u.Net.(*tls.Conn); isTLS {
		u.Net.SetReadDeadline(time.Unix(1, 0)) // expired: TLS looks only at what it holds
		_, err := u.BR.Peek(1)
		u.Net.SetReadDeadline(time.Time{})
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
	}
	return socketQuiet(u.raw)
}

// socketQuiet reports whether a TCP connection has nothing to read and no
// FIN pending, by peeking without blocking. A closed one is not quiet;
// one it cannot look into (a parent's tunnel with early bytes) counts as
// quiet.
func socketQuiet(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	quiet := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = n <= 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && quiet
}

// Retryable reports whether a request that failed on a kept connection
// before any byte of a response arrived can be sent again on a new one:
// the upstream closed the idle connection as the request went out.
func Retryable(err error) bool {
	var na *NoAnswerError
	return errors.As(err, &na) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ErrServerClosing fails an upstream leg opened as the server closes.
var ErrServerClosing = errors.New("server closing")

// NoAnswerError is an upstream that closed or failed before the first byte
// of its response.
type NoAnswerError struct{ Err error }

func (e *NoAnswerError) Error() string { return "no response: " + e.Err.Error() }
func (e *NoAnswerError) Unwrap() error { return e.Err }

// maxResponseHead bounds an upstream response head (status line, header
// fields and interim 1xx answers).
const maxResponseHead = 1 << 20

var ErrResponseHeadTooLarge = errors.New("upstream response head too large")

// headLimit passes reads through, at most n bytes while armed.
type headLimit struct {
	r     io.Reader
	n     int64
	armed bool
}

func (l *headLimit) arm()    { l.n, l.armed = maxResponseHead, true }
func (l *headLimit) disarm() { l.armed = false }

func (l *headLimit) Read(p []byte) (int, error) {
	if !l.armed {
		return l.r.Read(p)
	}
	if l.n <= 0 {
		return 0, ErrResponseHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
