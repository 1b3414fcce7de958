package forward

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

// PeekBody is a request body as the decider sees it (Body): the first
// bytes the decider asks for are read here and kept, and the request, if
// allowed, sends them upstream before the rest (forward).
type PeekBody struct {
	RB     *http1.RequestBody // nil: the request has no body
	hidden bool               // GET, HEAD, OPTIONS: the decider is shown none
	Length int64              // Content-Length, or -1 for chunked
	conn   net.Conn           // the client's connection: Abort sets its read deadline

	mu      sync.Mutex
	head    []byte // bytes read for the decider
	aborted bool
	err     error // the client-side failure of Read
}

var _ ask.Body = (*PeekBody)(nil)

// NewPeekBody wraps the body of a request with method (rb nil when it has
// none) read from conn.
func NewPeekBody(method string, rb *http1.RequestBody, length int64, conn net.Conn) *PeekBody {
	return &PeekBody{RB: rb, hidden: http1.IsBodylessMethod(method), Length: length, conn: conn}
}

func (b *PeekBody) Hidden() bool { return b.hidden }

func (b *PeekBody) Reserve(max int) int {
	switch {
	case b.RB == nil:
		return 0
	case b.Length >= 0 && b.Length < int64(max):
		return int(b.Length)
	}
	return max
}

// Read reads up to max bytes of the body; cut reports more after them.
// With a Content-Length the length says so; a chunked body is read one
// byte further (kept, and forwarded with the rest).
func (b *PeekBody) Read(max int) ([]byte, bool, error) {
	if b.RB == nil {
		return nil, false, nil
	}
	want := max
	switch {
	case b.Length >= 0 && b.Length < int64(want):
		want = int(b.Length)
	case b.Length < 0 && !b.hidden:
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
		n, rerr := b.RB.Read(chunk[:min(len(chunk), want-len(buf))])
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
	cut := b.Length > int64(max) || len(buf) > max
	return buf[:min(len(buf), max)], cut, nil
}

var errAborted = errors.New("body read aborted")

// armDeadline gives the next read inspectIdle, unless the read was
// aborted (then false). Under the lock, so that an Abort's deadline is
// never overwritten.
func (b *PeekBody) armDeadline() bool {
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
func (b *PeekBody) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.aborted = true
	b.conn.SetReadDeadline(time.Now())
}

// failed is the client-side failure of a Read (not an Abort), if any: the
// request cannot be answered.
func (b *PeekBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborted {
		return nil
	}
	return b.err
}

// forward is the body to send upstream: the bytes read for the decider,
// then the rest.
func (b *PeekBody) forward() io.ReadCloser {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.head) == 0 {
		return b.RB
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b.head), b.RB), b.RB}
}
