package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

// upConn is a tunnel's upstream TLS connection, kept alive between
// requests.
type upConn struct {
	tc   *tls.Conn
	bulk *bulkConn // under tc
	lim  headLimit // between tc and br: bounds a response head
	br   *bufio.Reader
	bw   *bufio.Writer
	addr string
	used bool // it has carried a request: a failure may be its idle close
}

// upstream returns the tunnel's upstream connection: the kept one if it
// is still open, else a new one (dial.Dialer.TLS: the resolved-address
// check, the parent proxy, certificate verification against the
// Terminate's roots). The dial is bounded by the handshake timeout.
func (x *tlsSession) upstream(ctx context.Context) (*upConn, error) {
	if x.upc != nil {
		if x.upc.alive() {
			return x.upc, nil
		}
		x.dropUpstream()
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(x.t.HandshakeTimeout, defaultHandshakeTimeout))
	defer cancel()
	var bulk *bulkConn
	wrap := func(c net.Conn) net.Conn { bulk = &bulkConn{Conn: c}; return bulk }
	tc, dialed, err := x.s.Dialer.TLS(ctx, x.connect.Host, x.connect.Port, x.t.upstream, wrap)
	x.addr = dialed.Addr
	if err != nil {
		return nil, err
	}
	if !x.outer.setUpstream(tc) { // closed with the client, and at shutdown
		tc.Close()
		return nil, errors.New("server closing")
	}
	u := &upConn{tc: tc, bulk: bulk, bw: bufio.NewWriterSize(tc, 4096), addr: dialed.Addr}
	u.lim.r = tc
	u.br = bufio.NewReaderSize(&u.lim, 4096)
	x.upc = u
	return x.upc, nil
}

// dropUpstream closes the upstream connection.
func (x *tlsSession) dropUpstream() {
	if x.upc != nil {
		x.upc.tc.Close()
		x.upc = nil
	}
}

// alive reports whether a kept connection can carry another request: the
// upstream has not closed it (a close_notify or a FIN) and sent nothing
// unasked. Records TLS already holds are looked at without waiting, then
// the socket, without reading from it.
func (u *upConn) alive() bool {
	if u.br.Buffered() > 0 || u.bulk.buffered() {
		return false
	}
	u.tc.SetReadDeadline(time.Unix(1, 0)) // expired: TLS looks only at what it holds
	_, err := u.br.Peek(1)
	u.tc.SetReadDeadline(time.Time{})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	return socketQuiet(u.bulk.Conn)
}

// socketQuiet reports whether a TCP connection has nothing to read and no
// FIN pending, by peeking without blocking; connections it cannot look
// into count as quiet.
func socketQuiet(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	quiet := true
	var buf [1]byte
	rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		quiet = n <= 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	})
	return quiet
}

// retryable reports whether a request that failed on a kept connection
// before any byte of a response arrived can be sent again on a new one:
// the upstream closed the idle connection as the request went out.
func retryable(err error) bool {
	var na *noAnswerError
	return errors.As(err, &na) && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// maxResponseHead bounds an upstream response head (status line, header
// fields and interim 1xx answers), as dial's plain-HTTP transport does.
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
