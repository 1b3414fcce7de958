package link

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

var framings = []protocol.Framing{protocol.Line, protocol.Length}

// fakeDecider is the decider end of a link under test: it records every
// message the proxy sends and writes whatever the test tells it to.
type fakeDecider struct {
	t    *testing.T
	c    net.Conn
	w    *protocol.Writer
	msgs chan protocol.Message
}

// socketPair returns two connected stream sockets.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return conn(fds[0]), conn(fds[1])
}

// startLink dials a link over a socket pair and answers its hello with
// allowed; the fake decider then reads everything the proxy sends.
func startLink(t *testing.T, f protocol.Framing, cfg Config) (*Link, *fakeDecider) {
	t.Helper()
	return startLinkHello(t, f, cfg, `{"t":"hello","proto":1,"allowedDomains":["a.test"],"deniedDomains":[]}`)
}

// startLinkHello is startLink with the decider's hello; the proxy's
// messages are read under srt.v1 when the hello accepts it.
func startLinkHello(t *testing.T, f protocol.Framing, cfg Config, hello string) (*Link, *fakeDecider) {
	t.Helper()
	proxyEnd, decEnd := socketPair(t)
	d := &fakeDecider{t: t, c: decEnd, w: protocol.NewWriter(decEnd, f), msgs: make(chan protocol.Message, 8192)}
	cfg.Framing = f
	type res struct {
		l   *Link
		err error
	}
	got := make(chan res, 1)
	go func() {
		l, err := Dial(proxyEnd, cfg, 5*time.Second)
		got <- res{l, err}
	}()
	r := protocol.NewReader(decEnd, f, protocol.MaxProxyFrame)
	if _, err := r.Read(); err != nil {
		t.Fatalf("reading the proxy's hello: %v", err)
	}
	d.send(hello)
	rs := <-got
	if rs.err != nil {
		t.Fatal(rs.err)
	}
	t.Cleanup(func() { rs.l.Close() })
	go func() {
		for {
			frame, err := r.Read()
			if err != nil {
				close(d.msgs)
				return
			}
			m, err := protocol.DecodeProxyMessage(frame, rs.l.Ext())
			if err != nil {
				t.Errorf("the proxy sent a bad message %q: %v", frame, err)
				close(d.msgs)
				return
			}
			d.msgs <- m
		}
	}()
	return rs.l, d
}

func (d *fakeDecider) send(msgs ...string) {
	d.t.Helper()
	for _, m := range msgs {
		if err := d.w.Write([]byte(m)); err != nil {
			d.t.Fatalf("decider write: %v", err)
		}
	}
}

// next is the next message from the proxy.
func (d *fakeDecider) next() protocol.Message {
	d.t.Helper()
	select {
	case m, ok := <-d.msgs:
		if !ok {
			d.t.Fatal("the proxy closed the stream")
		}
		return m
	case <-time.After(5 * time.Second):
		d.t.Fatal("no message from the proxy")
	}
	return nil
}

// askAsync asks in a goroutine; the result arrives on the channel.
type answer struct {
	v   protocol.Verdict
	err error
}

func askAsync(l *Link, body Body) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		v, _, err := l.Ask(context.Background(), &protocol.Req{Method: "POST", Host: "a.test", Port: 80, Path: "/"}, body)
		ch <- answer{v, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
	}
	return answer{}
}

// waitDead waits for the link to die and checks why.
func waitDead(t *testing.T, l *Link, why string) {
	t.Helper()
	select {
	case <-l.Dead():
	case <-time.After(5 * time.Second):
		t.Fatalf("the link did not die (want %q)", why)
	}
	if got := l.Err().Error(); got != why {
		t.Fatalf("link died of %q, want %q", got, why)
	}
}

// alive checks, with a round trip, that the link still serves.
func alive(t *testing.T, l *Link, d *fakeDecider) {
	t.Helper()
	ch := askAsync(l, nil)
	req := d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"allow"`))
	if a := wait(t, ch); a.err != nil {
		t.Fatalf("the link does not serve: %v", a.err)
	}
}

func verdict(id uint64, rest string) string {
	return `{"t":"verdict","id":` + itoa(id) + `,` + rest + `}`
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// fakeBody is a request body: its data, or a Read that blocks until Abort.
type fakeBody struct {
	data   string
	hidden bool
	block  bool

	mu      sync.Mutex
	aborted chan struct{}
	reads   int
}

func newBody(data string) *fakeBody { return &fakeBody{data: data, aborted: make(chan struct{})} }

func (b *fakeBody) Hidden() bool { return b.hidden }

func (b *fakeBody) Reserve(max int) int {
	if b.block {
		return max
	}
	return min(len(b.data), max)
}

func (b *fakeBody) Read(max int) ([]byte, bool, error) {
	b.mu.Lock()
	b.reads++
	b.mu.Unlock()
	if b.block {
		<-b.aborted
		return nil, false, errors.New("aborted")
	}
	if len(b.data) > max {
		return []byte(b.data[:max]), true, nil
	}
	return []byte(b.data), false, nil
}

func (b *fakeBody) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.aborted:
	default:
		close(b.aborted)
	}
}

func isAborted(b *fakeBody) bool {
	select {
	case <-b.aborted:
		return true
	default:
		return false
	}
}

func unavailable(t *testing.T, err error, why string) {
	t.Helper()
	if err == nil || !errors.Is(err, ErrUnavailable) || !strings.HasSuffix(err.Error(), ": "+why) {
		t.Fatalf("error %v, want request decider: %s", err, why)
	}
}
