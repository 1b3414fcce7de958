package proxy

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
)

// upConn is an upstream connection kept alive between requests: a
// terminated tunnel's TLS connection, or a pooled plain-HTTP one (TCP to
// the destination or to the parent proxy, or TLS to an https://
// destination).
type upConn struct {
	conn net.Conn  // requests are written to it, responses read from it
	raw  net.Conn  // the TCP connection under it (conn itself without TLS)
	bulk *bulkConn // between TLS and raw in a terminated tunnel; nil otherwise
	lim  headLimit // between conn and br: bounds a response head
	br   *bufio.Reader
	bw   *bufio.Writer
	addr string // the address dialled, for the record
	// parent is the parent proxy the connection goes to: requests are
	// sent in absolute form with its credentials. nil: origin form.
	parent *url.URL
	used   bool // it has carried a request: a failure may be its idle close

	// The pool's: where it belongs, the address policy its address was
	// checked under, and the timer that closes it when idle too long.
	key     upKey
	policy  any // dial.Dialer.Policy's result, compared by identity
	expiry  *time.Timer
	watched chan struct{} // closed when the idle watch ends; nil: not watched (pool.go)
}

func newUpConn(c, raw net.Conn, addr string) *upConn {
	u := &upConn{conn: c, raw: raw, bw: bufio.NewWriterSize(c, 4096), addr: addr}
	u.lim.r = c
	u.br = bufio.NewReaderSize(&u.lim, 4096)
	return u
}

func (u *upConn) close() { u.conn.Close() }

// alive reports whether a kept connection can carry another request: the
// upstream has not closed it (a close_notify or a FIN) and sent nothing
// unasked. Bytes already read are looked at first; under TLS, records TLS
// holds, without waiting; then the socket, without reading from it.
func (u *upConn) alive() bool {
	if u.br.Buffered() > 0 || u.bulk != nil && u.bulk.buffered() {
		return false
	}
	if _, isTLS := u.conn.(*tls.Conn); isTLS {
		u.conn.SetReadDeadline(time.Unix(1, 0)) // expired: TLS looks only at what it holds
		_, err := u.br.Peek(1)
		u.conn.SetReadDeadline(time.Time{})
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

// retryable reports whether a request that failed on a kept connection
// before any byte of a response arrived can be sent again on a new one:
// the upstream closed the idle connection as the request went out.
func retryable(err error) bool {
	var na *noAnswerError
	return errors.As(err, &na) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// errServerClosing fails an upstream leg opened as the server closes.
var errServerClosing = errors.New("server closing")

// noAnswerError is an upstream that closed or failed before the first byte
// of its response.
type noAnswerError struct{ err error }

func (e *noAnswerError) Error() string { return "no response: " + e.err.Error() }
func (e *noAnswerError) Unwrap() error { return e.err }

// maxResponseHead bounds an upstream response head (status line, header
// fields and interim 1xx answers).
const maxResponseHead = 1 << 20

var errResponseHeadTooLarge = errors.New("upstream response head too large")

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
		return 0, errResponseHeadTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
