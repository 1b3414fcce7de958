package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

func TestAllowAndDeny(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			l, d := startLink(t, f, Config{})
			ch := askAsync(l, nil)
			req := d.next().(*protocol.Req)
			if req.ID != 1 {
				t.Fatalf("first id %d", req.ID)
			}
			d.send(verdict(1, `"action":"deny","status":418,"reason":"no tea"`))
			a := wait(t, ch)
			if deny, ok := a.v.(*protocol.Deny); !ok || deny.Status != 418 || *deny.Reason != "no tea" {
				t.Fatalf("got %#v, %v", a.v, a.err)
			}
			ch = askAsync(l, nil)
			req = d.next().(*protocol.Req)
			d.send(verdict(req.ID, `"action":"allow","setHeaders":{"x-a":["1"]}`))
			if a := wait(t, ch); a.v.Action() != protocol.ActionAllow {
				t.Fatalf("got %#v, %v", a.v, a.err)
			}
		})
	}
}

func TestNeedBody(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			l, d := startLink(t, f, Config{})
			ch := askAsync(l, newBody("hello world"))
			req := d.next().(*protocol.Req)
			d.send(verdict(req.ID, `"action":"need_body","max":5`))
			body := d.next().(*protocol.Body)
			if body.ID != req.ID || string(body.Data) != "hello" || !body.Cut {
				t.Fatalf("body %+v", body)
			}
			if held := l.BodyBytesHeld(); held != 5 {
				t.Errorf("held %d while deciding, want 5", held)
			}
			d.send(verdict(req.ID, `"action":"allow"`))
			if a := wait(t, ch); a.err != nil || a.v.Action() != protocol.ActionAllow {
				t.Fatalf("got %#v, %v", a.v, a.err)
			}
			if held := l.BodyBytesHeld(); held != 0 {
				t.Errorf("held %d after the verdict", held)
			}

			// A whole body fits: no cut. No body at all: empty data.
			for _, b := range []Body{newBody("tiny"), nil} {
				ch = askAsync(l, b)
				req = d.next().(*protocol.Req)
				d.send(verdict(req.ID, `"action":"need_body","max":64`))
				body = d.next().(*protocol.Body)
				want := "tiny"
				if b == nil {
					want = ""
				}
				if string(body.Data) != want || body.Cut {
					t.Fatalf("body %+v, want %q uncut", body, want)
				}
				d.send(verdict(req.ID, `"action":"deny","status":403`))
				if a := wait(t, ch); a.v.Action() != protocol.ActionDeny {
					t.Fatalf("got %#v, %v", a.v, a.err)
				}
			}
		})
	}
}

func TestDenyWhileReading(t *testing.T) {
	l, d := startLink(t, protocol.Line, Config{})
	b := newBody("")
	b.block = true
	ch := askAsync(l, b)
	req := d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"need_body","max":100`))
	time.Sleep(50 * time.Millisecond) // the read is under way
	d.send(verdict(req.ID, `"action":"deny","status":413,"reason":"too big"`))
	a := wait(t, ch)
	if deny, ok := a.v.(*protocol.Deny); !ok || deny.Status != 413 {
		t.Fatalf("got %#v, %v", a.v, a.err)
	}
	if !isAborted(b) {
		t.Error("the body read was not aborted")
	}
	alive(t, l, d)
}

func TestSequenceViolations(t *testing.T) {
	tests := []struct {
		name  string
		after string // sent after the need_body (and, with body, after the body frame)
		body  bool   // wait for the body frame first
		why   string
	}{
		{"allow while reading", `"action":"allow"`, false, whyNotDeny},
		{"need_body while reading", `"action":"need_body","max":5`, false, whyNotDeny},
		{"second need_body", `"action":"need_body","max":5`, true, whySecondNeedBody},
	}
	for _, tt := range tests {
		for _, f := range framings {
			t.Run(tt.name+"/"+f.String(), func(t *testing.T) {
				l, d := startLink(t, f, Config{})
				b := newBody("data")
				if !tt.body {
					b.block = true
				}
				ch := askAsync(l, b)
				req := d.next().(*protocol.Req)
				d.send(verdict(req.ID, `"action":"need_body","max":5`))
				if tt.body {
					d.next()
				} else {
					time.Sleep(50 * time.Millisecond)
				}
				d.send(verdict(req.ID, tt.after))
				waitDead(t, l, tt.why)
				unavailable(t, wait(t, ch).err, tt.why)
				if _, _, err := l.Ask(context.Background(), &protocol.Req{Method: "GET", Host: "a.test", Port: 80, Path: "/"}, nil); err == nil {
					t.Fatal("a dead link answered")
				} else {
					unavailable(t, err, tt.why)
				}
			})
		}
	}
}

func TestHiddenBody(t *testing.T) {
	l, d := startLink(t, protocol.Line, Config{})
	// The wire carries a body the decider was not shown: refused.
	b := newBody("x")
	b.hidden = true
	ch := askAsync(l, b)
	req := d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"need_body","max":100`))
	if a := wait(t, ch); !errors.Is(a.err, ErrBodyless) {
		t.Fatalf("got %#v, %v; want ErrBodyless", a.v, a.err)
	}
	// What the decider says of it later is dropped…
	d.send(verdict(req.ID, `"action":"deny","status":403`))
	alive(t, l, d)

	// …and an empty hidden body is sent as empty.
	b = newBody("")
	b.hidden = true
	ch = askAsync(l, b)
	req = d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"need_body","max":100`))
	if body := d.next().(*protocol.Body); len(body.Data) != 0 || body.Cut {
		t.Fatalf("body %+v", body)
	}
	d.send(verdict(req.ID, `"action":"allow"`))
	if a := wait(t, ch); a.err != nil {
		t.Fatal(a.err)
	}

	// A need_body for a request refused after its need_body kills.
	b = newBody("y")
	b.hidden = true
	ch = askAsync(l, b)
	req = d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"need_body","max":100`))
	wait(t, ch)
	d.send(verdict(req.ID, `"action":"need_body","max":100`))
	waitDead(t, l, whyNeedBodyLate)
}

func TestBodyBudget(t *testing.T) {
	l, d := startLink(t, protocol.Length, Config{MaxBodyHeld: 100})
	held := newBody("")
	held.block = true
	first := askAsync(l, held)
	req1 := d.next().(*protocol.Req)
	d.send(verdict(req1.ID, `"action":"need_body","max":60`))
	time.Sleep(50 * time.Millisecond)
	if n := l.BodyBytesHeld(); n != 60 {
		t.Fatalf("held %d, want 60", n)
	}
	second := askAsync(l, newBody(strings.Repeat("z", 50)))
	req2 := d.next().(*protocol.Req)
	d.send(verdict(req2.ID, `"action":"need_body","max":60`))
	unavailable(t, wait(t, second).err, whyBudget)
	// The link lives, and what comes for the refused request is dropped.
	d.send(verdict(req2.ID, `"action":"allow"`))
	alive(t, l, d)
	// A body that fits next to the held one is read.
	third := askAsync(l, newBody("0123456789"))
	req3 := d.next().(*protocol.Req)
	d.send(verdict(req3.ID, `"action":"need_body","max":40`))
	if body := d.next().(*protocol.Body); string(body.Data) != "0123456789" {
		t.Fatalf("body %+v", body)
	}
	d.send(verdict(req3.ID, `"action":"allow"`))
	wait(t, third)
	d.send(verdict(req1.ID, `"action":"deny","status":403`))
	if a := wait(t, first); a.v.Action() != protocol.ActionDeny {
		t.Fatalf("got %#v, %v", a.v, a.err)
	}
	if n := l.BodyBytesHeld(); n != 0 {
		t.Fatalf("held %d at the end", n)
	}
}

func TestTimeoutAndLateVerdicts(t *testing.T) {
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			l, d := startLink(t, f, Config{Timeout: 100 * time.Millisecond})
			start := time.Now()
			ch := askAsync(l, nil)
			req := d.next().(*protocol.Req)
			unavailable(t, wait(t, ch).err, "decider timed out")
			if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
				t.Errorf("timed out after %v", el)
			}
			// Late: a need_body and then a verdict for it are dropped.
			d.send(verdict(req.ID, `"action":"need_body","max":5`), verdict(req.ID, `"action":"allow"`))
			alive(t, l, d)

			// Timed out after its body was shown: a late need_body kills.
			ch = askAsync(l, newBody("abc"))
			req = d.next().(*protocol.Req)
			d.send(verdict(req.ID, `"action":"need_body","max":5`))
			d.next()
			unavailable(t, wait(t, ch).err, "decider timed out")
			d.send(verdict(req.ID, `"action":"need_body","max":5`))
			waitDead(t, l, whyNeedBodyLate)
		})
	}
}

func TestNothingWaits(t *testing.T) {
	l, d := startLink(t, protocol.Line, Config{})
	alive(t, l, d)
	d.send(verdict(7, `"action":"allow"`))
	waitDead(t, l, "verdict for id 7, which nothing waits on")

	// An id answered already is a violation too, inside the window.
	l, d = startLink(t, protocol.Line, Config{})
	alive(t, l, d)
	d.send(verdict(1, `"action":"deny","status":403`))
	waitDead(t, l, "verdict for id 1, which nothing waits on")
}

func TestIDWindow(t *testing.T) {
	l, d := startLink(t, protocol.Length, Config{})
	go func() {
		for m := range d.msgs {
			if r, ok := m.(*protocol.Req); ok {
				d.w.Write([]byte(verdict(r.ID, `"action":"allow"`)))
			}
		}
	}()
	for i := 0; i < idWindow+5; i++ {
		if _, _, err := l.Ask(context.Background(), &protocol.Req{Method: "GET", Host: "a.test", Port: 80, Path: "/"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// newest is 4101: ids 1…5 are 4096 or more below it, dropped.
	d.send(verdict(5, `"action":"allow"`), verdict(1, `"action":"deny","status":500`))
	time.Sleep(100 * time.Millisecond)
	if err := l.Err(); err != nil {
		t.Fatalf("link died: %v", err)
	}
	d.send(verdict(6, `"action":"allow"`))
	waitDead(t, l, "verdict for id 6, which nothing waits on")
}

func TestBackPressure(t *testing.T) {
	if got := maxQueuedFor(DefaultMaxBodyHeld); got != 123032918 {
		t.Fatalf("default queue limit %d, want ⌈64 MiB·4/3⌉+32 MiB = 123032918", got)
	}
	// net.Pipe has no buffer: a decider that does not read holds every
	// message in the queue.
	proxyEnd, decEnd := net.Pipe()
	defer decEnd.Close()
	go func() {
		r := protocol.NewReader(decEnd, protocol.Line, protocol.MaxProxyFrame)
		r.Read()
		protocol.NewWriter(decEnd, protocol.Line).Write([]byte(`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[]}`))
		// and never reads again
	}()
	l, err := Dial(proxyEnd, Config{MaxQueued: 2000, Timeout: time.Minute}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var asks []<-chan answer
	for i := 0; i < 40 && l.Err() == nil; i++ {
		asks = append(asks, askAsync(l, nil))
		time.Sleep(time.Millisecond)
	}
	select {
	case <-l.Dead():
	case <-time.After(5 * time.Second):
		t.Fatal("the link did not die")
	}
	if why := l.Err().Error(); !regexp.MustCompile(`^not reading: \d+ bytes queued$`).MatchString(why) {
		t.Fatalf("died of %q", why)
	}
	for _, ch := range asks {
		if a := wait(t, ch); !errors.Is(a.err, ErrUnavailable) {
			t.Fatalf("ask: %v", a.err)
		}
	}
}

// TestSocketFull: on a socket senders write themselves until it is full;
// then the writer goroutine waits for it with the rest, no sender waits,
// and the decider gets every message in order once it reads.
func TestSocketFull(t *testing.T) {
	proxyEnd, decEnd := socketPair(t)
	r := protocol.NewReader(decEnd, protocol.Line, protocol.MaxProxyFrame)
	w := protocol.NewWriter(decEnd, protocol.Line)
	go func() {
		r.Read()
		w.Write([]byte(`{"t":"hello","proto":1,"ext":["srt.v1"],"allowedDomains":[],"deniedDomains":[]}`))
	}()
	l, err := Dial(proxyEnd, Config{OfferExt: true, Timeout: time.Minute}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.direct == nil || !l.Ext() {
		t.Fatalf("direct %v, ext %v: want a socket and srt.v1", l.direct != nil, l.Ext())
	}
	// Far more than a socket buffer holds, while the decider reads nothing.
	const n = 3000
	reason := strings.Repeat("r", 900)
	sent := make(chan struct{})
	go func() {
		for i := uint64(1); i <= n; i++ {
			l.Refused(i, reason)
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("a sender waited for the decider")
	}
	for i := uint64(1); i <= n; i++ {
		frame, err := r.Read()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		m, err := protocol.DecodeProxyMessage(frame, true)
		if err != nil {
			t.Fatalf("message %d %.40q: %v", i, frame, err)
		}
		if rf, ok := m.(*protocol.Refused); !ok || rf.ID != i || rf.Reason != reason {
			t.Fatalf("message %d: %#v", i, m)
		}
	}
	// Drained: an ask goes out and is answered.
	ch := askAsync(l, nil)
	frame, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.DecodeProxyMessage(frame, false)
	if err != nil {
		t.Fatal(err)
	}
	req, ok := m.(*protocol.Req)
	if !ok {
		t.Fatalf("got %#v, want a req", m)
	}
	w.Write([]byte(verdict(req.ID, `"action":"allow"`)))
	if a := wait(t, ch); a.err != nil {
		t.Fatal(a.err)
	}
}

func TestHelloFailures(t *testing.T) {
	tests := []struct{ first, want string }{
		{`nonsense`, "decider: frame is not valid JSON"},
		{`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"deniedDomains":[]}`, "decider: duplicate key in frame"},
		{`{"t":"verdict","id":1,"action":"allow"}`, "decider: bad hello"},
		{`{"t":"hello","proto":2,"allowedDomains":[],"deniedDomains":[]}`, "decider: bad hello"},
		{`{"t":"update","allowedDomains":[],"deniedDomains":[]}`, "decider: bad hello"},
		{``, "decider: decider closed the stream"},
	}
	for _, tt := range tests {
		for _, f := range framings {
			t.Run(fmt.Sprintf("%s/%s", f, tt.want), func(t *testing.T) {
				proxyEnd, decEnd := socketPair(t)
				go func() {
					protocol.NewReader(decEnd, f, protocol.MaxProxyFrame).Read()
					if tt.first == "" {
						decEnd.Close()
						return
					}
					protocol.NewWriter(decEnd, f).Write([]byte(tt.first))
				}()
				_, err := Dial(proxyEnd, Config{Framing: f}, 5*time.Second)
				if err == nil || err.Error() != tt.want {
					t.Fatalf("got %v, want %s", err, tt.want)
				}
			})
		}
	}
}

func TestDialContextStops(t *testing.T) {
	proxyEnd, _ := socketPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := DialContext(ctx, proxyEnd, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestGarbageFailsPending(t *testing.T) {
	l, d := startLink(t, protocol.Line, Config{})
	ch := askAsync(l, nil)
	d.next()
	d.send(`{"t":"verdict","id":1,"action":"allow","setHeaders":{}}`)
	unavailable(t, wait(t, ch).err, "bad verdict frame")
	waitDead(t, l, "bad verdict frame")
}

// TestVerdictBeforeDeath: a verdict delivered before a violation kills the
// link still answers its request, every time (select would otherwise pick
// between the verdict and the death at random).
func TestVerdictBeforeDeath(t *testing.T) {
	for i := range 50 {
		l, d := startLink(t, protocol.Line, Config{})
		ch := askAsync(l, nil)
		d.next()
		d.send(verdict(1, `"action":"deny","status":403`), verdict(1, `"action":"deny","status":403`))
		waitDead(t, l, "verdict for id 1, which nothing waits on")
		if a := wait(t, ch); a.err != nil || a.v.Action() != protocol.ActionDeny {
			t.Fatalf("round %d: got %#v, %v; want the deny delivered before the link died", i, a.v, a.err)
		}
	}
}
