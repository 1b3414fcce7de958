package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReadHead checks the head parser's invariants on arbitrary input.
func FuzzReadHead(f *testing.F) {
	f.Add([]byte("GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n"))
	f.Add([]byte("\nCONNECT a:1 HTTP/1.0\nX:  v \t\n\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"))
	f.Add([]byte("GET http://a/ HTTP/1.1\r\nHost: a\nX: b\r\n\r\n"))
	f.Add([]byte("\r\nGET http://a/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 10
		if len(data) > 4*limit {
			return // past the limit nothing more is read
		}
		src := bytes.NewReader(data)
		br := bufio.NewReaderSize(src, 16)
		h, err := ReadHead(br, limit)
		if err != nil {
			var m *MalformedError
			if !errors.As(err, &m) && err != ErrHeadTooLarge && err != ErrNoRequest && err != io.ErrUnexpectedEOF {
				t.Fatalf("unexpected error type %T %v", err, err)
			}
			return
		}
		if !isToken([]byte(h.Method)) || h.Target == "" || (h.Minor != 0 && h.Minor != 1) {
			t.Fatalf("bad request line %+v", h)
		}
		size := len(h.Method) + len(h.Target)
		for _, f := range h.Fields {
			if !isToken([]byte(f.Name)) || f.Lower != strings.ToLower(f.Name) {
				t.Fatalf("bad field name %q", f.Name)
			}
			if strings.ContainsAny(f.Value, "\r\n\x00") || strings.Trim(f.Value, " \t") != f.Value {
				t.Fatalf("bad field value %q", f.Value)
			}
			size += len(f.Name) + len(f.Value)
		}
		if size > limit {
			t.Fatalf("head of %d bytes passed a %d-byte limit", size, limit)
		}
		// Every line of an accepted head ends in CRLF.
		read := data[:len(data)-src.Len()-br.Buffered()]
		if n := bytes.Count(read, []byte("\n")); n != bytes.Count(read, []byte("\r\n")) || !bytes.HasSuffix(read, []byte("\r\n\r\n")) {
			t.Fatalf("accepted a head with a bare LF: %q", read)
		}
	})
}
