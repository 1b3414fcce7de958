package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
)

// srt.mask.v1 in srt's mode: the decider accepts it when offered, passes
// the masks srt gives to the proxy before any allow names them, names a
// command's masks in the allows of its http requests to their hosts (none
// for a tunnel, another command's request or another host), drops them
// when the command is unregistered, and never logs a value.
func TestSRTModeMasks(t *testing.T) {
	proxyMine, proxyTheirs := socketPair(t)
	ctlMine, ctlTheirs := socketPair(t)
	cmd := exec.Command(deciderBin, "--proxy-fd", "3", "--control-fd", "4", "-d")
	cmd.ExtraFiles = []*os.File{proxyTheirs, ctlTheirs}
	d := startProc(t, cmd)
	proxyTheirs.Close()
	ctlTheirs.Close()
	defer proxyMine.Close()
	ctl := control.New(ctlMine)
	r, w := protocol.NewReader(proxyMine, protocol.Line, protocol.MaxFrame), protocol.NewWriter(proxyMine, protocol.Line)
	next := func() string {
		t.Helper()
		proxyMine.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	expect := func(want string) {
		t.Helper()
		if got := next(); got != want {
			t.Fatalf("proxy got\n  %s\nwant\n  %s", got, want)
		}
	}
	ctl.Write(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: []string{"api.github.com", "*.example.com"}, DeniedDomains: []string{}}})
	w.Write([]byte(`{"t":"hello","proto":1,"ext":["srt.v1","srt.mask.v1"]}`))
	expect(`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1","srt.mask.v1"]}`)

	const keyA, keyB = "command-a-0123456789abcdef", "command-b-0123456789abcdef"
	userA, userB := srtlink.UserFor(keyA), srtlink.UserFor(keyB)
	const secret = "ghp_REALSECRETVALUE"
	ctl.Write(&control.Message{T: control.TRegister, ID: keyA, AllowedDomains: []string{"api.github.com"}})
	ctl.Write(&control.Message{T: control.TMasks, ID: keyA, Masks: []control.Mask{
		{ID: "a.1", Sentinel: "fake_value_11111111111111111", Value: secret, InjectHosts: []string{"api.github.com"}},
		{ID: "a.2", Sentinel: "fake_value_22222222222222222", Value: "wild", InjectHosts: []string{"*.example.com"}},
	}})
	ctl.Write(&control.Message{T: control.TMasks, ID: keyB, Masks: []control.Mask{
		{ID: "b.1", Sentinel: "fake_value_33333333333333333", Value: "AKIAREAL", InjectHosts: []string{"api.github.com"}, AWSPair: "default", AWSRole: protocol.AWSAccessKeyID},
	}})
	expect(`{"t":"masks","masks":[{"id":"a.1","sentinel":"fake_value_11111111111111111","value":"` + secret + `"},{"id":"a.2","sentinel":"fake_value_22222222222222222","value":"wild"}]}`)
	expect(`{"t":"masks","masks":[{"id":"b.1","sentinel":"fake_value_33333333333333333","value":"AKIAREAL","aws":{"pair":"default","role":"accessKeyId"}}]}`)

	req := func(id int, kind, host, user string) {
		method, path := "GET", "/"
		if kind != "http" {
			method, path = "CONNECT", "*"
		}
		b, _ := json.Marshal(map[string]any{"t": "req", "id": id, "method": method, "host": host, "port": 443, "path": path, "kind": kind, "user": user})
		w.Write(b)
	}
	req(1, "http", "api.github.com", userA)
	expect(`{"t":"verdict","id":1,"action":"allow","inject":["a.1"]}`)
	req(2, "http", "api.github.com", userB)
	expect(`{"t":"verdict","id":2,"action":"allow","inject":["b.1"]}`)
	req(3, "http", "x.example.com", userA)
	expect(`{"t":"verdict","id":3,"action":"allow","inject":["a.2"]}`)
	req(4, "connect", "api.github.com", userA)
	expect(`{"t":"verdict","id":4,"action":"allow"}`)
	req(5, "socks", "api.github.com", userA)
	expect(`{"t":"verdict","id":5,"action":"allow"}`)
	req(6, "http", "x.example.com", userB)
	expect(`{"t":"verdict","id":6,"action":"allow"}`)
	req(7, "http", "api.github.com", srtlink.BareUser)
	expect(`{"t":"verdict","id":7,"action":"allow"}`)

	// Unregistered: its masks are dropped, after the allows that named them.
	ctl.Write(&control.Message{T: control.TUnregister, ID: keyA})
	expect(`{"t":"masks","drop":["a.1","a.2"]}`)
	req(8, "http", "x.example.com", userA)
	expect(`{"t":"verdict","id":8,"action":"allow"}`)
	req(9, "http", "api.github.com", userB)
	expect(`{"t":"verdict","id":9,"action":"allow","inject":["b.1"]}`)

	// A mask the proxy would refuse (its sentinel holds a live one) stops
	// the decider: the proxy never sees it. Its value is never said.
	ctl.Write(&control.Message{T: control.TMasks, ID: "command-c-0123456789abcdef", Masks: []control.Mask{
		{ID: "c.1", Sentinel: "xfake_value_33333333333333333", Value: secret, InjectHosts: []string{"api.github.com"}},
	}})
	rest := d.rest()
	ctlMine.Close()
	if d.code == 0 || !strings.Contains(strings.Join(rest, "\n"), "sentinel of mask c.1 overlaps mask b.1") {
		t.Errorf("exit %d, stderr %q", d.code, rest)
	}
	for _, l := range rest {
		if strings.Contains(l, "REALSECRET") || strings.Contains(l, "AKIAREAL") {
			t.Errorf("a value on stderr: %q", l)
		}
	}
}

// Offered srt.v1 alone (or nothing), the decider sends no masks and no
// inject.
func TestSRTModeMasksNotOffered(t *testing.T) {
	proxyMine, proxyTheirs := socketPair(t)
	ctlMine, ctlTheirs := socketPair(t)
	cmd := exec.Command(deciderBin, "--proxy-fd", "3", "--control-fd", "4")
	cmd.ExtraFiles = []*os.File{proxyTheirs, ctlTheirs}
	startProc(t, cmd)
	proxyTheirs.Close()
	ctlTheirs.Close()
	defer proxyMine.Close()
	defer ctlMine.Close()
	ctl := control.New(ctlMine)
	r, w := protocol.NewReader(proxyMine, protocol.Line, protocol.MaxFrame), protocol.NewWriter(proxyMine, protocol.Line)
	ctl.Write(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: []string{"api.github.com"}, DeniedDomains: []string{}}})
	w.Write([]byte(`{"t":"hello","proto":1,"ext":["srt.v1"]}`))
	ctl.Write(&control.Message{T: control.TMasks, ID: "command-a-0123456789abcdef", Masks: []control.Mask{
		{ID: "a.1", Sentinel: "fake_value_11111111111111111", Value: "v", InjectHosts: []string{"api.github.com"}},
	}})
	ctl.Write(&control.Message{T: control.TSync, Q: 1})
	for _, want := range []string{
		`{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1"]}`,
		`{"t":"verdict","id":1,"action":"allow"}`,
	} {
		if want[6] == 'v' {
			// After srt's sync: the masks message has been read.
			if m, err := ctl.Read(); err != nil || m.T != control.TSync {
				t.Fatalf("sync: %+v, %v", m, err)
			}
			w.Write([]byte(`{"t":"req","id":1,"method":"GET","host":"api.github.com","port":443,"path":"/","kind":"http","user":"` + srtlink.UserFor("command-a-0123456789abcdef") + `"}`))
		}
		proxyMine.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := r.Read()
		if err != nil || string(b) != want {
			t.Fatalf("proxy got %s, %v; want %s", b, err, want)
		}
	}
}
