package http1

import (
	"bufio"
	"errors"
	"io"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// BodyKind is how a request body is framed (RFC 9112 §6.3).
type BodyKind int

const (
	BodyNone BodyKind = iota
	BodyLength
	BodyChunked
)

// Framing reads a request head's body framing: Transfer-Encoding "chunked"
// (the only coding accepted), or Content-Length, or none. Both at once,
// more than one Content-Length field (even with the same value: RFC 9112
// §6.3 lets a recipient take one, the reference's parser refuses them),
// and Transfer-Encoding on HTTP/1.0 are malformed (request smuggling
// vectors).
func Framing(h *RequestHead) (BodyKind, int64, error) {
	te := h.Values("transfer-encoding")
	cl := h.Values("content-length")
	if len(te) > 0 {
		if len(cl) > 0 {
			return 0, 0, Malformed("Transfer-Encoding with Content-Length")
		}
		if h.Minor == 0 {
			return 0, 0, Malformed("Transfer-Encoding in HTTP/1.0")
		}
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return 0, 0, Malformed("Transfer-Encoding other than chunked")
		}
		return BodyChunked, -1, nil
	}
	if len(cl) == 0 {
		return BodyNone, 0, nil
	}
	if len(cl) > 1 {
		return 0, 0, Malformed("more than one Content-Length")
	}
	v := cl[0]
	if v == "" || len(v) > 18 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, 0, Malformed("Content-Length")
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	if n == 0 {
		return BodyNone, 0, nil
	}
	return BodyLength, n, nil
}

// maxTrailerBytes bounds the trailer section of a chunked body; trailers
// are read and dropped.
const maxTrailerBytes = 16 << 10

var errBodyClosed = errors.New("request body read after the request ended")

// RequestBody is a request body read from the client connection while the
// transport sends it upstream, possibly from another goroutine. finish
// ends it: the connection can be reused only if the body was read to its
// end, and nothing touches the connection's reader afterwards.
type RequestBody struct {
	mu        sync.Mutex
	br        *bufio.Reader
	r         io.Reader // the chunked decoder, or nil for Content-Length
	remaining int64     // Content-Length bytes left
	eof       bool
	closed    bool
	err       error        // the client side failed
	n         atomic.Int64 // bytes read so far
	onFirst   func()       // sends 100 Continue, once
}

func NewRequestBody(kind BodyKind, n int64, br *bufio.Reader, onFirst func()) *RequestBody {
	b := &RequestBody{br: br, remaining: n, onFirst: onFirst}
	if kind == BodyChunked {
		b.r = httputil.NewChunkedReader(br)
	}
	return b
}

func (b *RequestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return 0, errBodyClosed
	case b.err != nil:
		return 0, b.err
	case b.eof:
		return 0, io.EOF
	}
	if b.onFirst != nil {
		b.onFirst()
		b.onFirst = nil
	}
	var n int
	var err error
	if b.r != nil {
		n, err = b.r.Read(p)
		if err == io.EOF {
			err = skipTrailers(b.br)
			if err == nil {
				err = io.EOF
			}
		}
	} else {
		if int64(len(p)) > b.remaining {
			p = p[:b.remaining]
		}
		n, err = b.br.Read(p)
		b.remaining -= int64(n)
		if b.remaining == 0 {
			err = io.EOF
		} else if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	b.n.Add(int64(n))
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.err = err
	}
	return n, err
}

// BytesRead is how many bytes of the body have been read so far.
func (b *RequestBody) BytesRead() int64 { return b.n.Load() }

// Close is called by the transport; the body's end is Finish's business.
func (b *RequestBody) Close() error { return nil }

// Finish ends the body and reports whether it was read completely and
// without error. A read in progress (the transport still sending) counts
// as incomplete.
func (b *RequestBody) Finish() bool {
	if !b.mu.TryLock() {
		return false
	}
	defer b.mu.Unlock()
	b.closed = true
	return b.eof
}

// ClientErr is the client-side error the body hit, if any.
func (b *RequestBody) ClientErr() error {
	if !b.mu.TryLock() {
		return nil
	}
	defer b.mu.Unlock()
	return b.err
}

// skipTrailers reads the trailer section after a chunked body's last chunk
// and drops it.
func skipTrailers(br *bufio.Reader) error {
	budget := maxTrailerBytes
	for {
		line, err := readHeadLine(br, &budget)
		switch {
		case err == io.EOF:
			return io.ErrUnexpectedEOF
		case err != nil:
			return err
		case len(line) == 0:
			return nil
		}
	}
}
