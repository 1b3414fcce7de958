package control

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// socketpair returns the two ends of a Unix stream socket pair, the kind
// of channel srt and the decider share.
func socketpair(t testing.TB) (a, b *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	a, b = os.NewFile(uintptr(fds[0]), "srt"), os.NewFile(uintptr(fds[1]), "decider")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// writeRaw writes s to w in the background (a socket pair holds less than
// the largest line) and returns where the result arrives.
func writeRaw(w io.Writer, s string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(w, s)
		done <- err
	}()
	return done
}

// everyMessage has one message of each type, with every field it uses.
var everyMessage = []struct {
	name string
	m    *Message
}{
	{"config", &Message{T: TConfig, Ask: true, Network: &Network{
		AllowedDomains:          []string{"github.com", "*.example.org", "[::1]:9000"},
		DeniedDomains:           []string{"evil.example.org", "*:25"},
		DeniedDomainReasons:     map[string]string{"evil.example.org": "Evil <host>\nuse good.example.org"},
		StrictAllowlist:         true,
		DeniedResolvedAddresses: []string{"10.0.0.0/8", "fc00::/7"},
	}}},
	{"config empty lists", &Message{T: TConfig, Network: &Network{AllowedDomains: []string{}, DeniedDomains: []string{}}}},
	{"register", &Message{T: TRegister, ID: "command-id-0123456789abc", AllowedDomains: []string{"pypi.org", "files.example:8443"}}},
	{"unregister", &Message{T: TUnregister, ID: "command-id-0123456789abc"}},
	{"ask", &Message{T: TAsk, Q: 1<<53 + 1, Host: "ask.example", Port: 8443, User: "srt.Y29tbWFuZA=="}},
	{"answer allow", &Message{T: TAnswer, Q: 7, Allow: true}},
	{"answer deny", &Message{T: TAnswer, Q: 8, Reason: "not approved \u00e9 \U0001F600"}},
	{"violation", &Message{T: TViolation, Line: "deny network-outbound [::1]:443 (host is not on the allow list)", User: "srt"}},
	{"sync", &Message{T: TSync, Q: 42}},
	{"sync zero", &Message{T: TSync}},
}

func TestRoundTrip(t *testing.T) {
	srtEnd, deciderEnd := socketpair(t)
	srt, decider := New(srtEnd), New(deciderEnd)
	// Both directions carry every type here; the protocol says who sends
	// which, the codec does not.
	for _, dir := range []struct {
		name     string
		from, to *Conn
	}{{"srt to decider", srt, decider}, {"decider to srt", decider, srt}} {
		for _, tc := range everyMessage {
			t.Run(dir.name+"/"+tc.name, func(t *testing.T) {
				if err := dir.from.Write(tc.m); err != nil {
					t.Fatalf("Write: %v", err)
				}
				got, err := dir.to.Read()
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if !reflect.DeepEqual(got, tc.m) {
					t.Errorf("Read =\n %+v\nwant\n %+v", got, tc.m)
					if got.Network != nil && tc.m.Network != nil {
						t.Errorf("network =\n %+v\nwant\n %+v", *got.Network, *tc.m.Network)
					}
				}
			})
		}
	}
}

// TestWireFormat pins the field names both ends share: one compact JSON
// object per line, fields a message does not use left out.
func TestWireFormat(t *testing.T) {
	cases := []struct {
		name string
		m    *Message
		want string
	}{
		{"config", everyMessage[0].m,
			`{"t":"config","network":{"allowedDomains":["github.com","*.example.org","[::1]:9000"],"deniedDomains":["evil.example.org","*:25"],` +
				`"deniedDomainReasons":{"evil.example.org":"Evil \u003chost\u003e\nuse good.example.org"},"strictAllowlist":true,` +
				`"deniedResolvedAddresses":["10.0.0.0/8","fc00::/7"]},"ask":true}`},
		{"config minimal", everyMessage[1].m, `{"t":"config","network":{"allowedDomains":[],"deniedDomains":[]}}`},
		{"register", everyMessage[2].m, `{"t":"register","id":"command-id-0123456789abc","allowedDomains":["pypi.org","files.example:8443"]}`},
		{"unregister", everyMessage[3].m, `{"t":"unregister","id":"command-id-0123456789abc"}`},
		{"ask", &Message{T: TAsk, Q: 3, Host: "ask.example", Port: 443, User: "srt.eA=="}, `{"t":"ask","q":3,"host":"ask.example","port":443,"user":"srt.eA=="}`},
		{"answer allow", everyMessage[5].m, `{"t":"answer","q":7,"allow":true}`},
		{"answer deny", &Message{T: TAnswer, Q: 8, Reason: "no"}, `{"t":"answer","q":8,"reason":"no"}`},
		{"violation", &Message{T: TViolation, Line: "deny network-outbound a.example:80 (x)", User: "srt"},
			`{"t":"violation","user":"srt","line":"deny network-outbound a.example:80 (x)"}`},
		{"sync", everyMessage[8].m, `{"t":"sync","q":42}`},
		{"sync zero", everyMessage[9].m, `{"t":"sync"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := New(&buf).Write(tc.m); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tc.want+"\n" {
				t.Errorf("wrote\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

// TestReadAccepts: lines another encoder might write that mean the same.
func TestReadAccepts(t *testing.T) {
	cases := []struct {
		name string
		line string
		want *Message
	}{
		{"crlf", `{"t":"sync","q":1}` + "\r\n", &Message{T: TSync, Q: 1}},
		{"spaces", ` { "t" : "sync" , "q" : 2 } ` + "\n", &Message{T: TSync, Q: 2}},
		{"null network", `{"t":"config","network":null}` + "\n", &Message{T: TConfig}},
		{"no newline before eof", `{"t":"sync","q":3}`, &Message{T: TSync, Q: 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(rw(tc.line))
			got, err := c.Read()
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Read = %+v; want %+v", got, tc.want)
			}
			if _, err := c.Read(); err != io.EOF {
				t.Errorf("then Read = %v; want io.EOF", err)
			}
		})
	}
}

// rw is a ReadWriter that reads s and discards what is written.
func rw(s string) io.ReadWriter {
	return struct {
		io.Reader
		io.Writer
	}{strings.NewReader(s), io.Discard}
}

func TestReadRejects(t *testing.T) {
	cases := []struct {
		name string
		line string
		want string // the error text
	}{
		{"not json", "hello", "control: invalid character 'h' looking for beginning of value"},
		{"blank line", "", "control: unexpected end of JSON input"},
		{"truncated object", `{"t":"sync"`, "control: unexpected end of JSON input"},
		{"two objects", `{"t":"sync"} {"t":"sync"}`, "control: invalid character '{' after top-level value"},
		{"array", `[{"t":"sync"}]`, "control: json: cannot unmarshal array into Go value of type control.Message"},
		{"unknown type", `{"t":"hello"}`, `control: unknown message "hello"`},
		{"type case", `{"t":"SYNC"}`, `control: unknown message "SYNC"`},
		{"no type", `{"q":1}`, `control: unknown message ""`},
		{"empty object", `{}`, `control: unknown message ""`},
		{"null", `null`, `control: unknown message ""`},
		{"type not a string", `{"t":1}`, "control: json: cannot unmarshal number into Go struct field Message.t of type string"},
		{"negative q", `{"t":"sync","q":-1}`, "control: json: cannot unmarshal number -1 into Go struct field Message.q of type uint64"},
		{"network not an object", `{"t":"config","network":"x"}`, "control: json: cannot unmarshal string into Go struct field Message.network of type control.Network"},
		{"list not strings", `{"t":"register","id":"x","allowedDomains":[1]}`, "control: json: cannot unmarshal number into Go struct field Message.allowedDomains of type string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A bad line is refused; the line after it still reads, so the
			// refusal is the reader's to act on.
			c := New(rw(tc.line + "\n" + `{"t":"sync","q":9}` + "\n"))
			m, err := c.Read()
			if err == nil {
				t.Fatalf("Read accepted %q as %+v", tc.line, m)
			}
			if err.Error() != tc.want {
				t.Errorf("Read error %q; want %q", err, tc.want)
			}
			if !errors.Is(err, ErrMessage) {
				t.Errorf("Read error %q is not ErrMessage: the stream would be taken for broken", err)
			}
			if m, err := c.Read(); err != nil || !reflect.DeepEqual(m, &Message{T: TSync, Q: 9}) {
				t.Errorf("next Read = %+v, %v", m, err)
			}
		})
	}
}

func TestReadSizeLimit(t *testing.T) {
	// A violation whose line makes the whole message n bytes with its
	// newline.
	lineOf := func(n int) string {
		const frame = `{"t":"violation","line":""}` + "\n"
		return `{"t":"violation","line":"` + strings.Repeat("x", n-len(frame)) + `"}` + "\n"
	}
	t.Run("at the limit", func(t *testing.T) {
		a, b := socketpair(t)
		done := writeRaw(a, lineOf(maxLine)+`{"t":"sync"}`+"\n")
		c := New(b)
		m, err := c.Read()
		if err != nil {
			t.Fatalf("Read of a %d-byte line: %v", maxLine, err)
		}
		if m.T != TViolation || len(m.Line) != maxLine-len(`{"t":"violation","line":""}`+"\n") {
			t.Errorf("Read = %s", summary(m))
		}
		if m, err := c.Read(); err != nil || m.T != TSync {
			t.Errorf("next Read = %s, %v", summary(m), err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	over := []struct {
		name string
		line string
	}{
		{"one byte over", lineOf(maxLine + 1)},
		{"far over", lineOf(maxLine + 100)},
		// Were the part that fits taken for a line, this would read as
		// a sync.
		{"message padded over", `{"t":"sync","q":5}` + strings.Repeat(" ", maxLine) + "\n"},
	}
	for _, tc := range over {
		t.Run(tc.name, func(t *testing.T) {
			a, b := socketpair(t)
			writeRaw(a, tc.line+`{"t":"sync"}`+"\n")
			c := New(b)
			if m, err := c.Read(); !errors.Is(err, bufio.ErrTooLong) {
				t.Fatalf("Read = %s, %v; want bufio.ErrTooLong", summary(m), err)
			}
			// The channel has lost its framing: it stays failed, and what it
			// holds of the long line is never taken for a message.
			for i := range 2 {
				if m, err := c.Read(); !errors.Is(err, bufio.ErrTooLong) {
					t.Errorf("Read %d after = %s, %v; want bufio.ErrTooLong again", i+1, summary(m), err)
				}
			}
		})
	}
}

// summary describes a message without its (possibly megabytes of) text.
func summary(m *Message) string {
	if m == nil {
		return "nil"
	}
	return fmt.Sprintf("%q message with a %d-byte line", m.T, len(m.Line))
}

func TestReadEnd(t *testing.T) {
	t.Run("eof at once", func(t *testing.T) {
		a, b := socketpair(t)
		a.Close()
		c := New(b)
		for i := range 2 {
			if m, err := c.Read(); err != io.EOF || m != nil {
				t.Errorf("Read %d = %+v, %v; want nil, io.EOF", i, m, err)
			}
		}
	})
	t.Run("eof after messages", func(t *testing.T) {
		a, b := socketpair(t)
		w := New(a)
		for q := range uint64(3) {
			if err := w.Write(&Message{T: TSync, Q: q + 1}); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
		c := New(b)
		for q := range uint64(3) {
			if m, err := c.Read(); err != nil || m.Q != q+1 {
				t.Fatalf("Read %d = %+v, %v", q, m, err)
			}
		}
		if _, err := c.Read(); err != io.EOF {
			t.Errorf("Read after the last message = %v; want io.EOF", err)
		}
	})
	t.Run("cut mid-message", func(t *testing.T) {
		a, b := socketpair(t)
		if _, err := io.WriteString(a, `{"t":"sync","q":1}`+"\n"+`{"t":"config","netw`); err != nil {
			t.Fatal(err)
		}
		a.Close()
		c := New(b)
		if m, err := c.Read(); err != nil || m.Q != 1 {
			t.Fatalf("Read = %+v, %v", m, err)
		}
		// A writer that died mid-line is not a clean end.
		if m, err := c.Read(); err == nil || err == io.EOF {
			t.Errorf("Read of a cut message = %+v, %v; want a decoding error", m, err)
		}
	})
	t.Run("read error", func(t *testing.T) {
		pr, pw := io.Pipe()
		boom := errors.New("boom")
		go func() {
			io.WriteString(pw, `{"t":"sync","q":1}`+"\n")
			pw.CloseWithError(boom)
		}()
		c := New(struct {
			io.Reader
			io.Writer
		}{pr, io.Discard})
		if m, err := c.Read(); err != nil || m.Q != 1 {
			t.Fatalf("Read = %+v, %v", m, err)
		}
		for i := range 2 {
			if _, err := c.Read(); !errors.Is(err, boom) {
				t.Errorf("Read %d = %v; want the stream's error", i, err)
			}
		}
	})
}

func TestWriteClosedPeer(t *testing.T) {
	a, b := socketpair(t)
	b.Close()
	err := New(a).Write(&Message{T: TSync, Q: 1})
	if !errors.Is(err, syscall.EPIPE) {
		t.Errorf("Write to a closed peer = %v; want EPIPE", err)
	}
}

// chunked is a stream that takes each write in small pieces, as a pipe or
// a socket may when its buffer is full. (An *os.File serialises whole
// writes itself, which would hide a Conn that did not.)
type chunked struct {
	io.Reader
	w io.Writer
}

func (c chunked) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 512)
		m, err := c.w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
		runtime.Gosched()
	}
	return n, nil
}

// TestConcurrentWrites: Write is safe for concurrent use; every message
// arrives whole, each writer's in its order.
func TestConcurrentWrites(t *testing.T) {
	const writers, each = 8, 300
	a, b := socketpair(t)
	w := New(chunked{a, a})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range uint64(each) {
				// Big enough that one message takes several socket writes
				// if the lines were not serialised.
				line := fmt.Sprintf("%d %s", i, strings.Repeat("v", 4096))
				if err := w.Write(&Message{T: TViolation, Q: q, User: fmt.Sprint(i), Line: line}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); a.Close() }()
	c := New(b)
	next := make([]uint64, writers)
	for range writers * each {
		m, err := c.Read()
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		var i int
		if _, err := fmt.Sscan(m.User, &i); err != nil || i < 0 || i >= writers {
			t.Fatalf("message from no writer: %+v", m)
		}
		if m.Line != fmt.Sprintf("%d %s", i, strings.Repeat("v", 4096)) {
			t.Fatalf("writer %d: message mixed with another", i)
		}
		if m.Q != next[i] {
			t.Fatalf("writer %d: message %d arrived when %d was due", i, m.Q, next[i])
		}
		next[i]++
	}
	if _, err := c.Read(); err != io.EOF {
		t.Errorf("Read after all messages = %v; want io.EOF", err)
	}
}
