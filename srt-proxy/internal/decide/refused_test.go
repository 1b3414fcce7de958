package decide

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt-proxy/internal/link"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// allowingDecider is a decider over a pipe that speaks srt.v1, allows every
// request, and passes on the ids of the refused messages it gets.
func allowingDecider(t *testing.T) (*link.Link, <-chan uint64) {
	t.Helper()
	ours, theirs := net.Pipe()
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	refused := make(chan uint64, 1024)
	go func() {
		r, w := protocol.NewReader(theirs, protocol.Line, protocol.MaxProxyFrame), protocol.NewWriter(theirs, protocol.Line)
		send := func(m protocol.Message) bool {
			b, err := protocol.Encode(m)
			return err == nil && w.Write(b) == nil
		}
		for {
			frame, err := r.Read()
			if err != nil {
				return
			}
			m, err := protocol.DecodeProxyMessage(frame, true)
			if err != nil {
				t.Errorf("the proxy sent %q: %v", frame, err)
				return
			}
			switch m := m.(type) {
			case *protocol.ProxyHello:
				if !send(&protocol.DeciderHello{Ext: []string{protocol.ExtSRTv1}}) {
					return
				}
			case *protocol.Req:
				if !send(&protocol.Allow{ID: m.ID}) {
					return
				}
			case *protocol.Refused:
				refused <- m.ID
			}
		}
	}()
	l, err := link.Dial(ours, link.Config{Framing: protocol.Line, OfferExt: true}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if !l.Ext() {
		t.Fatal("srt.v1 is not in force")
	}
	return l, refused
}

// A refusal after an allow names the request the decider allowed, and the
// Asker keeps nothing of a request once Ask has returned: a request holds
// the body the decider read (up to protocol.MaxBody), which must go with
// the request, not stay for the next thousands of allows.
func TestRefusedNamesTheAllowAndKeepsNoRequest(t *testing.T) {
	l, refused := allowingDecider(t)
	a := &Asker{Link: l}
	const n = 50
	var gone atomic.Int32
	for i := range n {
		r := &ask.Request{Kind: ask.KindConnect, Method: "CONNECT", Host: "a.test", Port: 443, Path: "*"}
		runtime.SetFinalizer(r, func(*ask.Request) { gone.Add(1) })
		v, err := a.Ask(context.Background(), r)
		if err != nil || !v.Allow {
			t.Fatalf("request %d: %+v, %v", i, v, err)
		}
		a.Refused(r, "resolved to a loopback address")
		select {
		case id := <-refused:
			if id != uint64(i+1) {
				t.Fatalf("request %d: refused names id %d, want %d", i, id, i+1)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d: no refused message", i)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); gone.Load() < n-1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests were collected: the Asker keeps them", gone.Load(), n)
		}
		runtime.GC()
	}
	runtime.KeepAlive(a) // the Asker lives on, as the proxy's does
}
