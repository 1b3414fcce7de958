package protocol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// Framing is how messages are delimited on the stream.
type Framing int

const (
	// Line: one message per line, terminated by '\n'; no '\r' before it,
	// no blank line.
	Line Framing = iota
	// Length: a 4-byte big-endian length, then that many bytes (the
	// reference's framing).
	Length
)

func (f Framing) String() string {
	switch f {
	case Line:
		return "line"
	case Length:
		return "length"
	}
	return fmt.Sprintf("framing(%d)", int(f))
}

// ParseFraming reads "line" or "length" (--decider-framing).
func ParseFraming(s string) (Framing, error) {
	switch s {
	case "line":
		return Line, nil
	case "length":
		return Length, nil
	}
	return 0, fmt.Errorf("unknown decider framing %q (want line or length)", s)
}

// Reader reads frames. It is not safe for concurrent use.
type Reader struct {
	br     *bufio.Reader
	r      io.Reader
	f      Framing
	max    int
	err    error // sticky: after an error the link is dead
	header [4]byte
}

// lineBuffer is the bufio size of a line Reader; a line longer than this
// is gathered piece by piece, up to max.
const lineBuffer = 64 << 10

// NewReader reads frames in framing f from r; a frame longer than maxLen
// bytes (the newline not counted) is a *ProtocolError "oversized frame",
// found before more than maxLen+64 KiB of it is held: a length prefix is
// judged alone, a line as it arrives.
func NewReader(r io.Reader, f Framing, maxLen int) *Reader {
	rd := &Reader{r: r, f: f, max: maxLen}
	if f == Line {
		rd.br = bufio.NewReaderSize(r, min(max(maxLen, 0)+2, lineBuffer))
	}
	return rd
}

// Read returns the next frame, in a slice of its own. At the end of the
// stream between frames it returns io.EOF, inside one
// io.ErrUnexpectedEOF. A line ending in "\r\n" or an empty line is a
// *ProtocolError, as is an oversized frame; after any error every Read
// returns it again.
func (r *Reader) Read() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	var frame []byte
	if r.f == Line {
		frame, r.err = r.readLine()
	} else {
		frame, r.err = r.readLength()
	}
	return frame, r.err
}

func (r *Reader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = line[:len(line)-1]
			cr := len(line) > 0 && line[len(line)-1] == '\r'
			switch content := len(line) - btoi(cr); {
			case content > r.max:
				return nil, violation(ReasonOversized, "")
			case cr:
				return nil, violation(ReasonCRLF, "")
			case content == 0:
				return nil, violation(ReasonBlankLine, "")
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			// One more byte than max may be a '\r' before the newline.
			if len(line) > r.max+1 {
				return nil, violation(ReasonOversized, "")
			}
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF && len(line) > r.max:
			return nil, violation(ReasonOversized, "")
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r *Reader) readLength() ([]byte, error) {
	if _, err := io.ReadFull(r.r, r.header[:]); err != nil {
		return nil, err // io.EOF between frames, io.ErrUnexpectedEOF inside the header
	}
	n := binary.BigEndian.Uint32(r.header[:])
	if uint64(n) > uint64(max(r.max, 0)) {
		return nil, violation(ReasonOversized, fmt.Sprintf("length prefix %d", n))
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r.r, frame); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return frame, nil
}

// Writer writes frames. It is safe for concurrent use: each frame goes to
// the stream whole, never interleaved with another.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	f   Framing
	err error // sticky: a frame written in part has broken the stream
}

// NewWriter writes frames in framing f to w.
func NewWriter(w io.Writer, f Framing) *Writer {
	return &Writer{w: w, f: f}
}

// Errors of Writer.Write for a message its framing cannot carry.
var (
	ErrEmptyFrame = errors.New("protocol: an empty message cannot be framed")
	ErrNewline    = errors.New("protocol: a line-framed message cannot contain a newline or end in a carriage return")
	ErrTooLong    = errors.New("protocol: a message is too long for a 4-byte length")
)

// smallFrame is the size up to which a frame is copied so that it goes to
// the stream in one Write.
const smallFrame = 64 << 10

// Frame returns msg (an encoded message, Encode's output) framed in f,
// refusing a message the framing cannot carry (ErrEmptyFrame, ErrNewline,
// ErrTooLong). A line is ended in place when msg has room for the newline
// (Encode leaves it), so msg is not to be used afterwards.
func Frame(f Framing, msg []byte) ([]byte, error) {
	header, trailer, err := frameParts(f, msg)
	if err != nil {
		return nil, err
	}
	if len(header) == 0 {
		return append(msg, trailer...), nil
	}
	return append(append(make([]byte, 0, len(header)+len(msg)), header...), msg...), nil
}

// frameParts checks msg against framing f and returns what goes before
// and after it.
func frameParts(f Framing, msg []byte) (header, trailer []byte, err error) {
	switch {
	case len(msg) == 0:
		return nil, nil, ErrEmptyFrame
	case f == Line:
		if bytes.IndexByte(msg, '\n') >= 0 || msg[len(msg)-1] == '\r' {
			return nil, nil, ErrNewline
		}
		return nil, lineEnd, nil
	case uint64(len(msg)) > math.MaxUint32:
		return nil, nil, ErrTooLong
	}
	return binary.BigEndian.AppendUint32(nil, uint32(len(msg))), nil, nil
}

var lineEnd = []byte{'\n'}

// Write writes msg (an encoded message, Encode's output) as one frame. A
// message the framing cannot carry is refused before anything is written
// (ErrEmptyFrame, ErrNewline, ErrTooLong); after a failed write every Write
// returns that error again.
func (w *Writer) Write(msg []byte) error {
	header, trailer, err := frameParts(w.f, msg)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if len(msg) <= smallFrame {
		buf := make([]byte, 0, len(header)+len(msg)+len(trailer))
		buf = append(append(append(buf, header...), msg...), trailer...)
		w.err = writeAll(w.w, buf)
	} else {
		for _, part := range [][]byte{header, msg, trailer} {
			if w.err = writeAll(w.w, part); w.err != nil {
				break
			}
		}
	}
	return w.err
}

func writeAll(w io.Writer, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}
