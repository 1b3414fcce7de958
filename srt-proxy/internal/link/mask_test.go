package link

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// The srt.mask.v1 side of the link: the offer, the live mask table, an
// allow's inject resolved into masks, and every violation killing the link.

const (
	maskHello = `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1","srt.mask.v1"]}`
	srtHello  = `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1"]}`
	sentA     = "fake_value_aaaaaaaaaaaaaaaa"
	sentB     = "fake_value_bbbbbbbbbbbbbbbb"
)

func maskMsg(masks ...string) string {
	return `{"t":"masks","masks":[` + strings.Join(masks, ",") + `]}`
}

func mask(id, sentinel, value string) string {
	return `{"id":"` + id + `","sentinel":"` + sentinel + `","value":"` + value + `"}`
}

type maskAnswer struct {
	v      protocol.Verdict
	inject []protocol.Mask
	err    error
}

// askKind asks about a request of kind k in a goroutine.
func askKind(l *Link, k protocol.Kind) <-chan maskAnswer {
	r := &protocol.Req{Method: "GET", Host: "a.test", Port: 80, Path: "/", Kind: k, User: "srt.Yw=="}
	if k != protocol.KindHTTP {
		r.Method, r.Path = "CONNECT", "*"
	}
	ch := make(chan maskAnswer, 1)
	go func() {
		v, inject, err := l.Ask(context.Background(), r, nil)
		ch <- maskAnswer{v, inject, err}
	}()
	return ch
}

func waitMask(t *testing.T, ch <-chan maskAnswer) maskAnswer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
	}
	return maskAnswer{}
}

func TestMaskOffer(t *testing.T) {
	for _, f := range framings {
		proxyEnd, decEnd := socketPair(t)
		got := make(chan string, 1)
		go func() {
			b, _ := protocol.NewReader(decEnd, f, protocol.MaxProxyFrame).Read()
			got <- string(b)
			protocol.NewWriter(decEnd, f).Write([]byte(`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[]}`))
		}()
		l, err := Dial(proxyEnd, Config{Framing: f, OfferExt: true}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}`
		if f == protocol.Length {
			want = `{"t":"hello","proto":1}`
		}
		if h := <-got; h != want {
			t.Errorf("%s: hello %s; want %s", f, h, want)
		}
		if l.Mask() {
			t.Errorf("%s: srt.mask.v1 in force though the decider declined it", f)
		}
		l.Close()
	}
}

// TestMaskInject: masks given, an allow naming them hands the request
// their values; a drop read after the allow does not take them away, and
// one read before makes the id unknown.
func TestMaskInject(t *testing.T) {
	l, d := startLinkHello(t, protocol.Line, Config{OfferExt: true}, maskHello)
	if !l.Mask() {
		t.Fatal("srt.mask.v1 not in force")
	}
	d.send(maskMsg(mask("c1.1", sentA, "secret-one"), `{"id":"c1.2","sentinel":"`+sentB+`","value":"AKIAREAL","aws":{"pair":"p","role":"accessKeyId"}}`))
	ch := askKind(l, protocol.KindHTTP)
	req := d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"allow","inject":["c1.2","c1.1"]`), `{"t":"masks","drop":["c1.1","c1.2"]}`)
	a := waitMask(t, ch)
	if a.err != nil || a.v.Action() != protocol.ActionAllow {
		t.Fatalf("got %v, %v", a.v, a.err)
	}
	want := []protocol.Mask{
		{ID: "c1.2", Sentinel: sentB, Value: "AKIAREAL", AWS: &protocol.AWSRole{Pair: "p", Role: protocol.AWSAccessKeyID}},
		{ID: "c1.1", Sentinel: sentA, Value: "secret-one"},
	}
	if !reflect.DeepEqual(a.inject, want) {
		t.Fatalf("inject = %+v; want %+v", a.inject, want)
	}
	// An allow without inject hands none.
	ch = askKind(l, protocol.KindHTTP)
	req = d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"allow"`))
	if a := waitMask(t, ch); a.err != nil || a.inject != nil {
		t.Fatalf("got %v, %+v", a.err, a.inject)
	}
	// The drop is in force now: the ids are unknown.
	ch = askKind(l, protocol.KindHTTP)
	req = d.next().(*protocol.Req)
	d.send(verdict(req.ID, `"action":"allow","inject":["c1.1"]`))
	unavailable(t, waitMask(t, ch).err, "inject names unknown mask c1.1")
	waitDead(t, l, "inject names unknown mask c1.1")
}

// TestMaskViolations: each link rule kills the link with its reason, and
// the request waiting gets it.
func TestMaskViolations(t *testing.T) {
	for _, c := range []struct {
		name, hello string
		kind        protocol.Kind
		msgs        []string // before the verdict; "%" is the request's verdict
		want        string
	}{
		{"given-twice", maskHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", sentA, "v")), maskMsg(mask("c1.1", sentB, "v"))}, "mask id c1.1 given twice"},
		{"given-after-drop", maskHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", sentA, "v")), `{"t":"masks","drop":["c1.1"]}`, maskMsg(mask("c1.1", sentA, "v"))}, "mask id c1.1 given twice"},
		{"overlap-live", maskHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", sentA, "v")), maskMsg(mask("c2.1", "x"+sentA, "v"))}, "sentinel of mask c2.1 overlaps mask c1.1"},
		{"aws-twice", maskHello, protocol.KindHTTP, []string{
			`{"t":"masks","masks":[{"id":"a","sentinel":"` + sentA + `","value":"v","aws":{"pair":"p","role":"sessionToken"}}]}`,
			`{"t":"masks","masks":[{"id":"b","sentinel":"` + sentB + `","value":"v","aws":{"pair":"p","role":"sessionToken"}}]}`}, "aws pair p has two masks of role sessionToken"},
		{"drop-unknown", maskHello, protocol.KindHTTP, []string{`{"t":"masks","drop":["c1.1"]}`}, "drop names unknown mask c1.1"},
		{"inject-unknown", maskHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", sentA, "v")), `%"inject":["c1.1","c1.2"]`}, "inject names unknown mask c1.2"},
		{"inject-connect", maskHello, protocol.KindConnect, []string{maskMsg(mask("c1.1", sentA, "v")), `%"inject":["c1.1"]`}, whyInjectKind},
		{"inject-socks", maskHello, protocol.KindSOCKS, []string{maskMsg(mask("c1.1", sentA, "v")), `%"inject":["c1.1"]`}, whyInjectKind},
		{"masks-declined", srtHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", sentA, "v"))}, protocol.ReasonUnexpected},
		{"inject-declined", srtHello, protocol.KindHTTP, []string{`%"inject":["c1.1"]`}, protocol.ReasonBadVerdict},
		{"masks-bad", maskHello, protocol.KindHTTP, []string{maskMsg(mask("c1.1", "short", "v"))}, protocol.ReasonBadMasks},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, d := startLinkHello(t, protocol.Line, Config{OfferExt: true}, c.hello)
			ch := askKind(l, c.kind)
			req := d.next().(*protocol.Req)
			for _, m := range c.msgs {
				if rest, ok := strings.CutPrefix(m, "%"); ok {
					m = verdict(req.ID, `"action":"allow",`+rest)
				}
				d.send(m)
			}
			unavailable(t, waitMask(t, ch).err, c.want)
			waitDead(t, l, c.want)
			if strings.Contains(l.Err().Error(), `"v"`) {
				t.Fatal("a value in the reason")
			}
		})
	}
}

// TestMaskLiveCount: the table follows masks and drops.
func TestMaskLiveCount(t *testing.T) {
	l, d := startLinkHello(t, protocol.Line, Config{OfferExt: true}, maskHello)
	d.send(maskMsg(mask("c1.1", sentA, "v"), mask("c1.2", sentB, "w")), `{"t":"masks","drop":["c1.2"]}`)
	ch := askKind(l, protocol.KindHTTP)
	d.send(verdict(d.next().(*protocol.Req).ID, `"action":"allow"`))
	if a := waitMask(t, ch); a.err != nil { // everything before the verdict is read
		t.Fatal(a.err)
	}
	if n := l.MasksLive(); n != 1 {
		t.Fatalf("%d masks live; want 1", n)
	}
}
