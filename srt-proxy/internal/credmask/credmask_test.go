package credmask

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// reference is substitution as the package documents it, the simple way:
// at each position the first mask whose sentinel starts there is
// replaced, else the byte is copied.
func reference(masks []ask.Mask, in []byte) []byte {
	var out []byte
	for i := 0; i < len(in); {
		matched := false
		for _, m := range masks {
			if bytes.HasPrefix(in[i:], []byte(m.Sentinel)) {
				out = append(out, m.Value...)
				i += len(m.Sentinel)
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, in[i])
			i++
		}
	}
	return out
}

// splitReader returns its data in the pieces splits cuts it into (each
// byte of splits is the next piece's length, 0 a read that returns
// nothing), then the rest at once.
type splitReader struct {
	data   []byte
	splits []byte
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.splits) > 0 {
		n = min(n, int(r.splits[0]))
		r.splits = r.splits[1:]
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// through reads in through a Reader of masks, its source cut by splits,
// read into buffers of readSize.
func through(t testing.TB, masks []ask.Mask, in, splits []byte, readSize int) []byte {
	s, err := New(masks)
	if err != nil {
		t.Fatal(err)
	}
	r := s.NewReader(&splitReader{data: in, splits: splits})
	var out []byte
	buf := make([]byte, readSize)
	// Each read returns a byte, or reads the source, which gives a byte
	// or uses up a split.
	longest := 0
	for _, m := range masks {
		longest = max(longest, len(m.Value))
	}
	bound := len(in)*(longest+1) + 2*len(in) + len(splits) + 10
	for range bound {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("no end after %d reads", bound)
	return nil
}

var sentA = "fake_value_6f1c2a9e-2b7d-4c1e-9a53-0d4f8e2b1c77"

func TestReplace(t *testing.T) {
	masks := []ask.Mask{
		{ID: "a", Sentinel: sentA, Value: "ghp_realtoken"},
		{ID: "b", Sentinel: "fake_value_short", Value: "B"},
		{ID: "c", Sentinel: "tiny", Value: "T"},
	}
	s, err := New(masks)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Bearer " + sentA, "Bearer ghp_realtoken"},
		{sentA + sentA, "ghp_realtokenghp_realtoken"},
		{sentA[:len(sentA)-1], sentA[:len(sentA)-1]},
		{"x" + sentA[1:], "x" + sentA[1:]},
		{"fake_value_short!", "B!"},
		{"a tiny thing", "a T thing"},
		{"tin", "tin"},
		{"nothing here", "nothing here"},
	} {
		if got := s.Replace(tc.in); got != tc.want {
			t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if s.SameLength() || s.MaxSentinel() != len(sentA) {
		t.Errorf("SameLength %v MaxSentinel %d", s.SameLength(), s.MaxSentinel())
	}
	same, _ := New([]ask.Mask{{Sentinel: "abcdefghijklmnop", Value: "ABCDEFGHIJKLMNOP"}})
	if !same.SameLength() {
		t.Error("a value as long as its sentinel: SameLength false")
	}
	if _, err := New([]ask.Mask{{ID: "x", Value: "v"}}); err != ErrEmptySentinel {
		t.Errorf("an empty sentinel: %v", err)
	}
	if s, err := New(nil); s != nil || err != nil {
		t.Errorf("New(nil) = %v, %v", s, err)
	}
}

// TestReaderSplitEverywhere cuts a body with a sentinel in it at every
// point, in two and in one-byte reads, and reads it through a Reader.
func TestReaderSplitEverywhere(t *testing.T) {
	masks := []ask.Mask{{ID: "a", Sentinel: sentA, Value: "REAL"}, {ID: "b", Sentinel: "fake_value_short", Value: "a longer value than its sentinel"}}
	body := []byte("head " + sentA + " mid fake_value_short" + sentA + " tail fake_value_shor")
	want := reference(masks, body)
	if !bytes.Contains(want, []byte("REAL mid a longer value than its sentinelREAL tail fake_value_shor")) {
		t.Fatalf("reference: %q", want)
	}
	for cut := range len(body) + 1 {
		if got := through(t, masks, body, []byte{byte(cut)}, 7); !bytes.Equal(got, want) {
			t.Fatalf("cut at %d: %q", cut, got)
		}
	}
	ones := bytes.Repeat([]byte{1}, len(body))
	if got := through(t, masks, body, ones, 1); !bytes.Equal(got, want) {
		t.Fatalf("one byte at a time: %q", got)
	}
	// iotest's checks of an io.Reader: it reads the expected bytes however
	// it is read.
	s, _ := New(masks)
	if err := iotest.TestReader(s.NewReader(iotest.OneByteReader(bytes.NewReader(body))), want); err != nil {
		t.Fatal(err)
	}
}

// TestReaderSourceError: a source that fails passes its error on, and
// what it held back is not sent.
func TestReaderSourceError(t *testing.T) {
	masks := []ask.Mask{{Sentinel: sentA, Value: "REAL"}}
	s, _ := New(masks)
	src := io.MultiReader(strings.NewReader("abc"+sentA[:10]), iotest.ErrReader(io.ErrUnexpectedEOF))
	got, err := io.ReadAll(s.NewReader(src))
	// 13 bytes, shorter than the sentinel: all of them held back.
	if err != io.ErrUnexpectedEOF || len(got) != 0 {
		t.Fatalf("held-back bytes of a failed body: %q, %v", got, err)
	}
}

// TestReaderMemory: a long body passes with the Reader's buffers never
// grown past a sentinel's hold-back and a read and a scan's output.
func TestReaderMemory(t *testing.T) {
	masks := []ask.Mask{{Sentinel: sentA, Value: strings.Repeat("V", 4096)}}
	s, _ := New(masks)
	body := bytes.Repeat([]byte(sentA+"0123456789"), 20000)
	r := s.NewReader(bytes.NewReader(body))
	buf := make([]byte, 1000)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if cap(r.in) > len(sentA)-1+readChunk || cap(r.out) > 2*(outLimit+4096) {
			t.Fatalf("buffers grew: in %d, out %d", cap(r.in), cap(r.out))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := int64(20000 * (4096 + 10)); n != want {
		t.Fatalf("read %d bytes, want %d", n, want)
	}
}

// FuzzReader holds the streaming substitution, over random bodies, masks
// and read boundaries, to the reference; and Replace to it too.
func FuzzReader(f *testing.F) {
	f.Add([]byte("x fake_value_0123456789abcdef y"), "fake_value_0123456789abcdef", "SECRET", "abcdefghijklmnopq", "v", []byte{3, 1, 0, 9}, uint8(5))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "aaaaaaaaaaaaaaaaa", "", "aaa", "bb", []byte{17, 16}, uint8(1))
	f.Add([]byte("abcabcab"), "abc", "1", "bca", "2", []byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, s1, v1, s2, v2 string, splits []byte, readSize uint8) {
		var masks []ask.Mask
		for _, m := range [][2]string{{s1, v1}, {s2, v2}} {
			if m[0] != "" && len(m[0]) <= 64 && len(m[1]) <= 256 {
				masks = append(masks, ask.Mask{Sentinel: m[0], Value: m[1]})
			}
		}
		if len(masks) == 0 || len(body) > 1<<12 {
			return
		}
		// Bodies made of the sentinels' own bytes, so that they match.
		if len(body) > 0 && body[0]&1 == 1 {
			var b []byte
			for _, c := range body[1:] {
				m := masks[int(c)%len(masks)].Sentinel
				b = append(b, m[:1+int(c)%len(m)]...)
			}
			body = b
		}
		want := reference(masks, body)
		if got := through(t, masks, body, splits, 1+int(readSize)); !bytes.Equal(got, want) {
			t.Fatalf("streamed %q\nwant     %q", got, want)
		}
		s, _ := New(masks)
		if got := s.Replace(string(body)); got != string(want) {
			t.Fatalf("Replace %q\nwant    %q", got, want)
		}
	})
}
