package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
)

// srt's own use, as srt/internal/egress starts the decider: --proxy-fd and
// --control-fd, the config first on the control channel, srt.v1 with the
// proxy; violations and syncs go back to srt, the lists follow a config
// update, and -d logs the decision records on stderr with srt's debug
// prefix.
func TestSRTMode(t *testing.T) {
	proxyMine, proxyTheirs := socketPair(t)
	ctlMine, ctlTheirs := socketPair(t)
	cmd := exec.Command(deciderBin, "--proxy-fd", "3", "--control-fd", "4", "-d")
	cmd.ExtraFiles = []*os.File{proxyTheirs, ctlTheirs}
	d := startProc(t, cmd)
	proxyTheirs.Close()
	ctlTheirs.Close()
	defer proxyMine.Close()
	// A pollable conn: Close then ends the reader below at once.
	ctlConn, err := net.FileConn(ctlMine)
	if err != nil {
		t.Fatal(err)
	}
	ctlMine.Close()
	ctl := control.New(ctlConn)
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
	fromSRT := make(chan *control.Message, 16)
	go func() {
		for {
			m, err := ctl.Read()
			if err != nil {
				close(fromSRT)
				return
			}
			fromSRT <- m
		}
	}()
	srtGets := func() string {
		t.Helper()
		select {
		case m := <-fromSRT:
			b, _ := json.Marshal(m)
			return string(b)
		case <-time.After(10 * time.Second):
			t.Fatal("nothing for srt")
		}
		return ""
	}

	// Under srt.v1 the lists go to srt-proxy as their IP literals alone,
	// all its address check reads.
	ctl.Write(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: []string{"a.example", "my_host.example", "192.0.2.1:8080"}, DeniedDomains: []string{"b.example"},
		DeniedDomainReasons: map[string]string{"b.example": "nope"}}})
	w.Write([]byte(`{"t":"hello","proto":1,"ext":["srt.v1"]}`))
	if got, want := next(), `{"t":"hello","proto":1,"allowedDomains":["192.0.2.1:8080"],"deniedDomains":[],"ext":["srt.v1"]}`; got != want {
		t.Fatalf("hello %s, want %s", got, want)
	}
	w.Write([]byte(`{"t":"req","id":1,"method":"CONNECT","host":"b.example","port":443,"path":"*","kind":"connect","user":"srt.YQ=="}`))
	if got, want := next(), `{"t":"verdict","id":1,"action":"deny","status":403,"reason":"nope"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	if got, want := srtGets(), `{"t":"violation","user":"srt.YQ==","line":"deny network-outbound b.example:443 (nope)"}`; got != want {
		t.Errorf("srt got %s, want %s", got, want)
	}
	d.expect(`srt: debug: decision=deny reason=nope kind=connect host=b.example port=443 user=srt.YQ== id=1 method=CONNECT rule=b.example`)
	w.Write([]byte(`{"t":"sync","id":5}`))
	if got, want := srtGets(), `{"t":"sync","q":5}`; got != want {
		t.Errorf("srt got %s, want %s", got, want)
	}
	ctl.Write(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: []string{"c.example"}, DeniedDomains: []string{"[fd00::1]"}}})
	if got, want := next(), `{"t":"update","allowedDomains":[],"deniedDomains":["[fd00::1]"]}`; got != want {
		t.Errorf("update %s, want %s", got, want)
	}
	w.Write([]byte(`{"t":"req","id":2,"method":"CONNECT","host":"c.example","port":443,"path":"*","kind":"connect","user":"srt.YQ=="}`))
	if got, want := next(), `{"t":"verdict","id":2,"action":"allow"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	d.expect(`srt: debug: decision=allow reason="host is on the allow list" kind=connect host=c.example port=443 user=srt.YQ== id=2 method=CONNECT rule=c.example`)
	w.Write([]byte(`{"t":"refused","id":2,"reason":"resolved to a loopback address"}`))
	if got, want := srtGets(), `{"t":"violation","user":"srt.YQ==","line":"deny network-outbound c.example:443 (resolved to a loopback address)"}`; got != want {
		t.Errorf("srt got %s, want %s", got, want)
	}
	d.expect(`srt: debug: refused by srt-proxy after the decider's allow decision=deny reason="resolved to a loopback address" kind=connect host=c.example port=443 user=srt.YQ== id=2 method=CONNECT rule=`)

	// srt closing its end is how it says stop: exit 0, nothing said.
	ctlConn.Close()
	if rest := d.rest(); len(rest) != 0 || d.code != 0 {
		t.Errorf("exit %d, stderr %q", d.code, rest)
	}
}

// When srt exits, srt-proxy (which stops at the end of its channel from
// srt) may be seen to go before srt's control channel ends: the decider
// says nothing then either. Alone, the proxy's going is reported.
func TestSRTModeProxyGoesFirst(t *testing.T) {
	for _, srtGoes := range []bool{true, false} {
		proxyMine, proxyTheirs := socketPair(t)
		ctlMine, ctlTheirs := socketPair(t)
		cmd := exec.Command(deciderBin, "--proxy-fd", "3", "--control-fd", "4")
		cmd.ExtraFiles = []*os.File{proxyTheirs, ctlTheirs}
		d := startProc(t, cmd)
		proxyTheirs.Close()
		ctlTheirs.Close()
		ctl := control.New(ctlMine)
		r, w := protocol.NewReader(proxyMine, protocol.Line, protocol.MaxFrame), protocol.NewWriter(proxyMine, protocol.Line)
		ctl.Write(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: []string{}, DeniedDomains: []string{}}})
		w.Write([]byte(`{"t":"hello","proto":1,"ext":["srt.v1"]}`))
		proxyMine.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
		proxyMine.Close()
		if srtGoes {
			time.Sleep(50 * time.Millisecond)
			ctlMine.Close()
			if rest := d.rest(); len(rest) != 0 || d.code != 0 {
				t.Errorf("srt gone after the proxy: exit %d, stderr %q", d.code, rest)
			}
			continue
		}
		rest := d.rest()
		ctlMine.Close()
		if want := []string{"decider: stopped (proxy closed the stream)"}; !reflect.DeepEqual(rest, want) || d.code != 1 {
			t.Errorf("the proxy gone alone: exit %d, stderr %q, want %q", d.code, rest, want)
		}
	}
}
