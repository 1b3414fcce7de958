package decide

import (
	"context"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt-proxy/internal/link"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// maskingDecider is a scripted decider on a socket pair that accepts
// srt.mask.v1, gives two masks, then allows every req naming both in
// inject (whatever its kind: the link must refuse it on a tunnel).
func maskingDecider(t *testing.T) *link.Link {
	t.Helper()
	fds, err := socketpair()
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := fds[0], fds[1]
	t.Cleanup(func() { ours.Close(); theirs.Close() })
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
				if !send(&protocol.DeciderHello{Ext: []string{protocol.ExtSRTv1, protocol.ExtMaskV1}}) ||
					!send(&protocol.Masks{Masks: []protocol.Mask{
						{ID: "c1.1", Sentinel: "fake_value_1111111111111111", Value: "ghp_real"},
						{ID: "c1.2", Sentinel: "fake_value_2222222222222222", Value: "AKIAREAL", AWS: &protocol.AWSRole{Pair: "default", Role: protocol.AWSAccessKeyID}},
					}}) {
					return
				}
			case *protocol.Req:
				if !send(&protocol.Allow{ID: m.ID, Inject: []string{"c1.2", "c1.1"}}) {
					return
				}
			}
		}
	}()
	l, err := link.Dial(ours, link.Config{Framing: protocol.Line, OfferExt: true}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if !l.Mask() {
		t.Fatal("srt.mask.v1 is not in force")
	}
	return l
}

func socketpair() ([2]net.Conn, error) {
	l, err := net.Listen("unix", "")
	if err != nil {
		return [2]net.Conn{}, err
	}
	defer l.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		done <- c
	}()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		return [2]net.Conn{}, err
	}
	return [2]net.Conn{c, <-done}, nil
}

// An allow's inject reaches the proxy's verdict as the masks' values, in
// the allow's order; on a tunnel it kills the link.
func TestAllowInjectReachesTheVerdict(t *testing.T) {
	a := &Asker{Link: maskingDecider(t)}
	r := &ask.Request{Kind: ask.KindHTTP, User: "srt.YQ==", Method: "GET", Host: "api.github.com", Port: 443, Path: "/", SNI: "api.github.com"}
	v, err := a.Ask(context.Background(), r)
	if err != nil || !v.Allow {
		t.Fatalf("%+v, %v", v, err)
	}
	want := []ask.Mask{
		{ID: "c1.2", Sentinel: "fake_value_2222222222222222", Value: "AKIAREAL", AWSPair: "default", AWSRole: protocol.AWSAccessKeyID},
		{ID: "c1.1", Sentinel: "fake_value_1111111111111111", Value: "ghp_real"},
	}
	if !reflect.DeepEqual(v.Inject, want) {
		t.Fatalf("Inject = %+v; want %+v", v.Inject, want)
	}
	_, err = a.Ask(context.Background(), &ask.Request{Kind: ask.KindConnect, User: "srt.YQ==", Method: "CONNECT", Host: "api.github.com", Port: 443, Path: "*"})
	if !errors.Is(err, link.ErrUnavailable) || err.Error() != "request decider: inject on an allow of a req whose kind is not http" {
		t.Fatalf("a tunnel allowed with inject: %v", err)
	}
}
