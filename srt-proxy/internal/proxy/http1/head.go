package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/srt-sandbox/decider/hostname"
)

// RequestHead is a parsed HTTP/1.x request line and header section.
type RequestHead struct {
	Method string
	Target string // the request-target as spelled
	Minor  int    // HTTP/1.minor: 0 or 1
	Fields []Field
}

// Field is one header field, its name as spelled, its value without
// surrounding whitespace.
type Field struct {
	Name, Value string
	Lower       string // the name in lower case
}

// maxHeadFields bounds the number of header fields in a head.
const maxHeadFields = 512

var (
	ErrHeadTooLarge = errors.New("request head too large")
	// ErrNoRequest is a connection closed cleanly between requests.
	ErrNoRequest = errors.New("no request")
)

// MalformedError is a request head that does not parse (answered 400).
type MalformedError struct{ why string }

func (e *MalformedError) Error() string { return "malformed request: " + e.why }

func Malformed(why string) error { return &MalformedError{why} }

// ReadHead reads one request head of at most limit bytes (request line,
// header lines and the empty line). Lines end in CRLF: a bare LF (which
// RFC 9112 §2.2 lets a recipient accept, and the reference's parser does
// not), any other CR, a NUL, obs-fold, whitespace before a colon and
// non-token names are malformed. Empty lines before the request line are skipped
// (RFC 9112 §2.2). ErrNoRequest means the peer closed before sending a
// byte of a head; io.ErrUnexpectedEOF that it closed in the middle of one.
func ReadHead(br *bufio.Reader, limit int) (*RequestHead, error) {
	budget := limit
	var line []byte
	var err error
	for len(line) == 0 {
		line, err = readHeadLine(br, &budget)
		if err == io.EOF {
			return nil, ErrNoRequest
		}
		if err != nil {
			return nil, err
		}
	}
	h := &RequestHead{}
	if err := h.parseRequestLine(line); err != nil {
		return nil, err
	}
	for {
		line, err = readHeadLine(br, &budget)
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			return h, nil
		}
		if len(h.Fields) == maxHeadFields {
			return nil, ErrHeadTooLarge
		}
		f, err := parseField(line)
		if err != nil {
			return nil, err
		}
		h.Fields = append(h.Fields, f)
	}
}

// readHeadLine returns the next line without its line ending, charging its
// bytes to budget. It returns io.EOF only when the stream ends before the
// line's first byte.
func readHeadLine(br *bufio.Reader, budget *int) ([]byte, error) {
	var acc []byte
	for {
		chunk, err := br.ReadSlice('\n')
		*budget -= len(chunk)
		if *budget < 0 {
			return nil, ErrHeadTooLarge
		}
		switch err {
		case nil:
			if acc != nil {
				chunk = append(acc, chunk...)
			}
			line, ok := bytes.CutSuffix(chunk, []byte("\r\n"))
			if !ok {
				return nil, Malformed("line ending is a bare LF, not CRLF")
			}
			if bytes.IndexByte(line, '\r') >= 0 {
				return nil, Malformed("bare CR")
			}
			return line, nil
		case bufio.ErrBufferFull:
			acc = append(acc, chunk...)
		case io.EOF:
			if len(acc) == 0 && len(chunk) == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// parseRequestLine parses "method SP request-target SP HTTP/1.x".
func (h *RequestHead) parseRequestLine(line []byte) error {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return Malformed("request line")
	}
	rest := line[sp1+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 <= 0 {
		return Malformed("request line")
	}
	method, target, version := line[:sp1], rest[:sp2], rest[sp2+1:]
	if !isToken(method) {
		return Malformed("method")
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return Malformed("request-target")
		}
	}
	switch string(version) {
	case "HTTP/1.1":
		h.Minor = 1
	case "HTTP/1.0":
		h.Minor = 0
	default:
		return Malformed("HTTP version")
	}
	h.Method, h.Target = string(method), string(target)
	return nil
}

// parseField parses "name: value".
func parseField(line []byte) (Field, error) {
	if line[0] == ' ' || line[0] == '\t' {
		return Field{}, Malformed("obs-fold") // RFC 9112 §5.2
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || !isToken(line[:colon]) {
		return Field{}, Malformed("header name") // RFC 9112 §5.1: no space before the colon
	}
	value := bytes.Trim(line[colon+1:], " \t")
	if bytes.IndexByte(value, 0) >= 0 {
		return Field{}, Malformed("NUL in a header value") // RFC 9110 §5.5
	}
	name := string(line[:colon])
	return Field{Name: name, Value: string(value), Lower: hostname.LowerASCII(name)}, nil
}

// Values returns the values of the header with a lower-case name.
func (h *RequestHead) Values(lower string) []string {
	var out []string
	for _, f := range h.Fields {
		if f.Lower == lower {
			out = append(out, f.Value)
		}
	}
	return out
}

// isToken reports whether b is an RFC 9110 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

// tokenByte marks the tchar bytes of RFC 9110 §5.6.2.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()
