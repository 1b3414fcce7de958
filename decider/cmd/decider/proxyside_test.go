package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// fakeProxy is the test as srt-proxy, at the other end of the decider's
// --proxy-fd: it sees exactly what the decider sends.
type fakeProxy struct {
	t       *testing.T
	decider *proc
	r       *protocol.Reader
	w       *protocol.Writer
	conn    *os.File
}

func startFakeProxy(t *testing.T, settings string, args ...string) *fakeProxy {
	t.Helper()
	mine, theirs := socketPair(t)
	cmd := exec.Command(deciderBin, append([]string{"--settings", settings, "--proxy-fd", "3"}, args...)...)
	cmd.ExtraFiles = []*os.File{theirs}
	p := &fakeProxy{t: t, decider: startProc(t, cmd), r: protocol.NewReader(mine, protocol.Line, protocol.MaxFrame), w: protocol.NewWriter(mine, protocol.Line), conn: mine}
	theirs.Close()
	t.Cleanup(func() { mine.Close() })
	return p
}

func (p *fakeProxy) send(msg string) {
	p.t.Helper()
	if err := p.w.Write([]byte(msg)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *fakeProxy) next() string {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := p.r.Read()
	if err != nil {
		p.t.Fatalf("reading from the decider: %v", err)
	}
	return string(b)
}

// The hello srt-proxy's host gate is made of: every allowedDomains entry
// the hello can carry, spelt as the hello spells it, each once; of
// deniedDomains only the IP literals (a name there is left to the decider,
// so that its reason is given); srt.v1 accepted, with
// deniedResolvedAddresses. A reload goes to srt-proxy as an update.
func TestHelloAndUpdate(t *testing.T) {
	f := writeSettings(t, `{"network": {
		"allowedDomains": ["Example.COM:8443", "*.Example.org", "[2001:DB8::1]", "10.0.0.1", "my_host.example.net", "example.com:8443", "localhost"],
		"deniedDomains": ["bad.example.org", "10.0.0.2:22", "*", "[::1]", "*:25"],
		"deniedDomainReasons": {"bad.example.org": "no"},
		"deniedResolvedAddresses": ["203.0.113.0/24", "2001:db8:ffff::/48"]}}`)
	p := startFakeProxy(t, f)
	p.decider.expect(`decider: warning: network.allowedDomains.4 "my_host.example.net" cannot be given to srt-proxy's host gate (the decider protocol's lists take names of letters, digits and "-" whose last label starts with a letter), so srt-proxy refuses that destination before asking the decider file=` + f)
	p.decider.expect("decider: settings loaded file=" + f)
	p.send(`{"t":"hello","proto":1,"ext":["srt.v1"]}`)
	if got, want := p.next(), `{"t":"hello","proto":1,"allowedDomains":["example.com:8443","*.example.org","[2001:db8::1]","10.0.0.1","localhost"],"deniedDomains":["10.0.0.2:22","[::1]"],"ext":["srt.v1"],"deniedResolvedAddresses":["203.0.113.0/24","2001:db8:ffff::/48"]}`; got != want {
		t.Fatalf("hello\n%s\nwant\n%s", got, want)
	}
	p.decider.expect("decider: serving srt-proxy srt_v1=true")

	// Decisions: the deny list (its "*" too) before the allow list.
	p.send(`{"t":"req","id":1,"method":"GET","host":"bad.example.org","port":80,"path":"/","kind":"http"}`)
	if got, want := p.next(), `{"t":"verdict","id":1,"action":"deny","status":403,"reason":"no"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	p.send(`{"t":"req","id":2,"method":"GET","host":"a.example.org","port":443,"sni":"a.example.org","path":"/","kind":"http"}`)
	if got, want := p.next(), `{"t":"verdict","id":2,"action":"deny","status":403,"reason":"host is on the deny list"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	p.decider.expect(decision("deny", "no", "bad.example.org", "80", "1", "GET", "bad.example.org"))
	p.decider.expect(decision("deny", "host is on the deny list", "a.example.org", "443", "2", "GET", "*"))

	replaceFile(t, f, `{"network": {"allowedDomains": ["a.example.org"], "deniedDomains": []}}`)
	if got, want := p.next(), `{"t":"update","allowedDomains":["a.example.org"],"deniedDomains":[]}`; got != want {
		t.Errorf("update\n%s\nwant\n%s", got, want)
	}
	p.decider.expect("decider: settings reloaded file=" + f)
	p.send(`{"t":"req","id":3,"method":"GET","host":"a.example.org","port":443,"path":"/","kind":"http"}`)
	if got, want := p.next(), `{"t":"verdict","id":3,"action":"allow"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	p.decider.expect(decision("allow", "host is on the allow list", "a.example.org", "443", "3", "GET", "a.example.org"))

	// srt-proxy's refusals after an allow, each with its line.
	for _, c := range []struct{ reason, decision string }{
		{"resolved to a loopback address", "deny"},
		{"upstream unreachable: dial tcp 10.0.0.9:443: connect: connection refused", "fail"},
	} {
		p.send(`{"t":"refused","id":3,"reason":"` + c.reason + `"}`)
		p.decider.expect(`decider: refused by srt-proxy after the decider's allow decision=` + c.decision + ` reason="` + c.reason + `" kind=http host=a.example.org port=443 user= id=3 method=GET rule=`)
	}
	// A refused for an id the decider did not allow is not recorded; a sync
	// (srt's) is no error.
	p.send(`{"t":"refused","id":2,"reason":"resolved to a loopback address"}`)
	p.send(`{"t":"sync","id":7}`)
	p.send(`{"t":"req","id":4,"method":"GET","host":"b.example.org","port":80,"path":"/","kind":"http"}`)
	if got, want := p.next(), `{"t":"verdict","id":4,"action":"deny","status":403,"reason":"host is not on the allow list"}`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	p.decider.expect(decision("deny", "host is not on the allow list", "b.example.org", "80", "4", "GET", ""))

	// A broken message ends the decider with srt-proxy's fault named.
	p.send(`{"t":"req","id":5}`)
	p.decider.expect("decider: stopped (proxy: bad req frame)")
	if code := p.decider.exitCode(); code != 1 {
		t.Errorf("exit %d", code)
	}
}

// An srt-proxy that does not offer srt.v1 (another implementation, or an
// older srt-proxy): its host gate keeps the hello's lists, so a reload that
// changes them says so; deniedResolvedAddresses cannot reach it, so the
// decider will not serve with them, nor take a reload that adds them.
func TestWithoutSRTv1(t *testing.T) {
	t.Run("deniedResolvedAddresses", func(t *testing.T) {
		f := writeSettings(t, `{"network": {"allowedDomains": ["a.example"], "deniedDomains": [], "deniedResolvedAddresses": ["10.0.0.0/8"]}}`)
		p := startFakeProxy(t, f)
		p.decider.expect("decider: settings loaded file=" + f)
		p.send(`{"t":"hello","proto":1}`)
		p.next() // the hello goes, before the decider knows no srt.v1 is in force
		p.decider.expect("decider: stopped (srt-proxy did not offer the srt.v1 extension, so network.deniedResolvedAddresses cannot reach its address check; run srt-proxy with its default line framing to the decider, or remove the setting)")
		if code := p.decider.exitCode(); code != 1 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("reloads", func(t *testing.T) {
		f := writeSettings(t, `{"network": {"allowedDomains": ["a.example"], "deniedDomains": []}}`)
		p := startFakeProxy(t, f)
		p.decider.expect("decider: settings loaded file=" + f)
		p.send(`{"t":"hello","proto":1}`)
		if got, want := p.next(), `{"t":"hello","proto":1,"allowedDomains":["a.example"],"deniedDomains":[]}`; got != want {
			t.Fatalf("hello %s, want %s", got, want)
		}
		p.decider.expect("decider: serving srt-proxy srt_v1=false")
		replaceFile(t, f, `{"network": {"allowedDomains": ["b.example"], "deniedDomains": []}}`)
		p.decider.expect("decider: warning: srt-proxy did not offer the srt.v1 extension, so its host gate keeps the lists it got when it started until it starts again; the decider decides with the new settings file=" + f)
		p.decider.expect("decider: settings reloaded file=" + f)
		p.send(`{"t":"req","id":1,"method":"GET","host":"a.example","port":80,"path":"/"}`)
		if got, want := p.next(), `{"t":"verdict","id":1,"action":"deny","status":403,"reason":"host is not on the allow list"}`; got != want {
			t.Errorf("%s, want %s", got, want)
		}
		p.decider.expect(decision("deny", "host is not on the allow list", "a.example", "80", "1", "GET", ""))
		replaceFile(t, f, `{"network": {"allowedDomains": ["b.example"], "deniedDomains": [], "deniedResolvedAddresses": ["10.0.0.0/8"]}}`)
		p.decider.expect("decider: " + f + ": srt-proxy did not offer the srt.v1 extension, so network.deniedResolvedAddresses cannot reach its address check; keeping the settings in force")
		p.send(`{"t":"req","id":2,"method":"GET","host":"b.example","port":80,"path":"/"}`)
		if got, want := p.next(), `{"t":"verdict","id":2,"action":"allow"}`; got != want {
			t.Errorf("%s, want %s", got, want)
		}
		p.decider.cmd.Process.Signal(syscall.SIGINT)
		p.decider.expect(decision("allow", "host is on the allow list", "b.example", "80", "2", "GET", "b.example"))
		p.decider.expect("decider: stopped (SIGINT)")
	})
}

// --log-format json: one object a line, with the decision record's keys
// and types (a number for port and id), the level and the time.
func TestLogJSON(t *testing.T) {
	f := writeSettings(t, `{"network": {"allowedDomains": ["a.example"], "deniedDomains": ["b.example"], "deniedDomainReasons": {"b.example": "say \"no\""}}}`)
	p := startFakeProxy(t, f, "--log-format", "json", "-d")
	obj := func() map[string]any {
		t.Helper()
		l := p.decider.line()
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if _, ok := m["time"].(string); !ok {
			t.Fatalf("%q has no time", l)
		}
		delete(m, "time")
		return m
	}
	if m, want := obj(), map[string]any{"level": "info", "file": f, "message": "settings loaded"}; !reflect.DeepEqual(m, want) {
		t.Errorf("%v, want %v", m, want)
	}
	p.send(`{"t":"hello","proto":1,"ext":["srt.v1"]}`)
	p.next()
	if m, want := obj(), map[string]any{"level": "info", "srt_v1": true, "message": "serving srt-proxy"}; !reflect.DeepEqual(m, want) {
		t.Errorf("%v, want %v", m, want)
	}
	p.send(`{"t":"req","id":1,"method":"GET","host":"a.example","port":80,"path":"/","kind":"http"}`)
	p.send(`{"t":"req","id":2,"method":"PUT","host":"b.example","port":8080,"path":"/","kind":"http"}`)
	for _, want := range []map[string]any{
		{"level": "info", "decision": "allow", "reason": "host is on the allow list", "kind": "http", "host": "a.example", "port": 80.0, "user": "", "id": 1.0, "method": "GET", "rule": "a.example"},
		{"level": "info", "decision": "deny", "reason": `say "no"`, "kind": "http", "host": "b.example", "port": 8080.0, "user": "", "id": 2.0, "method": "PUT", "rule": "b.example"},
	} {
		if m := obj(); !reflect.DeepEqual(m, want) {
			t.Errorf("%v\nwant %v", m, want)
		}
	}
	// -d: a directory change that leaves the file as it was is said at
	// debug level.
	if err := os.WriteFile(f+".other", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, want := obj(), map[string]any{"level": "debug", "file": f, "message": "the settings' directory changed, the file did not"}; !reflect.DeepEqual(m, want) {
		t.Errorf("%v, want %v", m, want)
	}
	p.conn.Close()
	if m, want := obj(), map[string]any{"level": "info", "message": "stopped (srt-proxy closed the stream)"}; !reflect.DeepEqual(m, want) {
		t.Errorf("%v, want %v", m, want)
	}
	if rest := p.decider.rest(); len(rest) != 0 || !strings.HasPrefix(p.decider.cmd.ProcessState.String(), "exit status 0") {
		t.Errorf("then %q, %s", rest, p.decider.cmd.ProcessState)
	}
}
