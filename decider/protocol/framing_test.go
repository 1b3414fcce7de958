package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWriterConcurrent(t *testing.T) {
	for _, fr := range []Framing{Line, Length} {
		t.Run(fr.String(), func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, fr)
			const writers, each = 8, 200
			var wg sync.WaitGroup
			for g := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						// Some frames are past smallFrame, written in parts.
						size := 10 + (g*each+i)%3*smallFrame
						msg := bytes.Repeat([]byte{'a' + byte(g)}, size)
						if err := w.Write(msg); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			r := NewReader(&buf, fr, 3*smallFrame)
			for n := 0; ; n++ {
				frame, err := r.Read()
				if err == io.EOF {
					if n != writers*each {
						t.Fatalf("%d frames; want %d", n, writers*each)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Count(frame, frame[:1]) != len(frame) {
					t.Fatalf("frame %d interleaves writers", n)
				}
			}
		})
	}
}

func TestWriterRefuses(t *testing.T) {
	var buf bytes.Buffer
	line := NewWriter(&buf, Line)
	for _, tc := range []struct {
		msg  string
		want error
	}{
		{"", ErrEmptyFrame},
		{"{}\n{}", ErrNewline},
		{"{}\r", ErrNewline},
	} {
		if err := line.Write([]byte(tc.msg)); err != tc.want {
			t.Errorf("Write(%q) = %v; want %v", tc.msg, err, tc.want)
		}
	}
	if err := NewWriter(&buf, Length).Write(nil); err != ErrEmptyFrame {
		t.Errorf("length Write(nil) = %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("refused messages wrote %q", buf.String())
	}
	if err := line.Write([]byte("{}\r{}")); err != nil || buf.String() != "{}\r{}\n" {
		t.Errorf("a CR inside: %v, %q", err, buf.String())
	}
}

func TestFrame(t *testing.T) {
	for _, tc := range []struct {
		f       Framing
		msg     string
		want    string
		wantErr error
		inPlace bool // msg has room: the newline goes in place
	}{
		{Line, `{"t":"sync","id":1}`, "{\"t\":\"sync\",\"id\":1}\n", nil, false},
		{Line, `{}`, "{}\n", nil, true},
		{Length, `{}`, "\x00\x00\x00\x02{}", nil, false},
		{Line, "", "", ErrEmptyFrame, false},
		{Line, "{}\n{}", "", ErrNewline, false},
		{Line, "{}\r", "", ErrNewline, false},
		{Length, "", "", ErrEmptyFrame, false},
	} {
		msg := []byte(tc.msg)
		if tc.inPlace {
			msg = append(make([]byte, 0, len(msg)+1), msg...)
		}
		got, err := Frame(tc.f, msg)
		if err != tc.wantErr || string(got) != tc.want {
			t.Errorf("Frame(%v, %q) = %q, %v; want %q, %v", tc.f, tc.msg, got, err, tc.want, tc.wantErr)
		}
		if tc.inPlace && &got[0] != &msg[:1][0] {
			t.Errorf("Frame(%v, %q) copied a message with room for the newline", tc.f, tc.msg)
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

func TestWriterErrorSticks(t *testing.T) {
	fw := &failWriter{}
	w := NewWriter(fw, Line)
	first := w.Write([]byte("{}"))
	if first == nil || w.Write([]byte("{}")) != first || fw.n != 1 {
		t.Fatalf("first %v, writes %d", first, fw.n)
	}
}

// A line over max is refused as it arrives, with no newline and no end of
// stream.
func TestLineOversizedWhileStreaming(t *testing.T) {
	for _, maxLen := range []int{10, MaxFrame} {
		pr, pw := io.Pipe()
		go func() {
			chunk := []byte(strings.Repeat("x", 4096))
			for {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
		}()
		done := make(chan error, 1)
		go func() {
			_, err := NewReader(pr, Line, maxLen).Read()
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != ReasonOversized {
				t.Fatalf("max %d: %v", maxLen, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("max %d: the reader waited for a newline", maxLen)
		}
		pr.Close()
	}
}

// A length prefix over max is refused before the frame is read.
func TestLengthOversizedNotRead(t *testing.T) {
	stream := bytes.NewReader(append([]byte{0, 0, 1, 0}, make([]byte, 256)...))
	_, err := NewReader(stream, Length, 255).Read()
	if err == nil || err.Error() != ReasonOversized || stream.Len() != 256 {
		t.Fatalf("err %v, %d bytes left", err, stream.Len())
	}
}

func TestParseFraming(t *testing.T) {
	for _, f := range []Framing{Line, Length} {
		if g, err := ParseFraming(f.String()); err != nil || g != f {
			t.Errorf("ParseFraming(%q) = %v, %v", f, g, err)
		}
	}
	if _, err := ParseFraming("Line"); err == nil {
		t.Error("ParseFraming(\"Line\") accepted")
	}
}
