package proxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// inspectIdle bounds the client's silence while its body is read for the
// decider: the read holds part of the body budget, and no verdict timer
// runs meanwhile.
const inspectIdle = 30 * time.Second

// peekBody is a request body as the decider sees it (Body): the first
// bytes the decider asks for are read here and kept, and the request, if
// allowed, sends them upstream before the rest (forward).
type peekBody struct {
	rb     *http1.RequestBody // nil: the request has no body
	hidden bool               // GET, HEAD, OPTIONS: the decider is shown none
	length int64              // Content-Length, or -1 for chunked
	conn   net.Conn           // the client's connection: Abort sets its read deadline

	mu      sync.Mutex
	head    []byte // bytes read for the decider
	aborted bool
	err     error // the client-side failure of Read
}

var _ ask.Body = (*peekBody)(nil)

// newPeekBody wraps the body of a request with method (rb nil when it has
// none) read from conn.
func newPeekBody(method string, rb *http1.RequestBody, length int64, conn net.Conn) *peekBody {
	return &peekBody{rb: rb, hidden: http1.IsBodylessMethod(method), length: length, conn: conn}
}

func (b *peekBody) Hidden() bool { return b.hidden }

func (b *peekBody) Reserve(max int) int {
	switch {
	case b.rb == nil:
		return 0
	case b.length >= 0 && b.length < int64(max):
		return int(b.length)
	}
	return max
}

// Read reads up to max bytes of the body; cut reports more after them.
// With a Content-Length the length says so; a chunked body is read one
// byte further (kept, and forwarded with the rest).
func (b *peekBody) Read(max int) ([]byte, bool, error) {
	if b.rb == nil {
		return nil, false, nil
	}
	want := max
	switch {
	case b.length >= 0 && b.length < int64(want):
		want = int(b.length)
	case b.length < 0 && !b.hidden:
		want = max + 1 // to tell a body of exactly max bytes from a longer one
	}
	buf := make([]byte, 0, min(want, 64<<10))
	chunk := make([]byte, 32<<10)
	var err error
	for len(buf) < want {
		if !b.armDeadline() {
			err = errAborted
			break
		}
		n, rerr := b.rb.Read(chunk[:min(len(chunk), want-len(buf))])
		buf = append(buf, chunk[:n]...)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head = buf
	if b.aborted {
		err = errAborted
	} else {
		b.conn.SetReadDeadline(time.Time{})
	}
	if err != nil {
		b.err = err
		return nil, false, err
	}
	cut := b.length > int64(max) || len(buf) > max
	return buf[:min(len(buf), max)], cut, nil
}

var errAborted = errors.New("body read aborted")

// armDeadline gives the next read inspectIdle, unless the read was
// aborted (then false). Under the lock, so that an Abort's deadline is
// never overwritten.
func (b *peekBody) armDeadline() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborted {
		return false
	}
	b.conn.SetReadDeadline(time.Now().Add(inspectIdle))
	return true
}

// Abort stops a Read in progress: its connection's read deadline passes.
// The request is refused afterwards and its connection closed.
func (b *peekBody) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.aborted = true
	b.conn.SetReadDeadline(time.Now())
}

// failed is the client-side failure of a Read (not an Abort), if any: the
// request cannot be answered.
func (b *peekBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborted {
		return nil
	}
	return b.err
}

// forward is the body to send upstream: the bytes read for the decider,
// then the rest.
func (b *peekBody) forward() io.ReadCloser {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.head) == 0 {
		return b.rb
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b.head), b.rb), b.rb}
}
