//go:build linux

package egress

import (
	"bytes"
	"errors"
	"net"
	"os"
	"reflect"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
)

// srt's side of the conformance vectors of srt-proxy's command line
// (shared/srtlink/flags.json): each Config srt can start srt-proxy with
// gives exactly its vector's command line. Every vector of a command
// line that is not refused must have its Config here.
func TestProxyArgsVectors(t *testing.T) {
	tls := &srtlink.TLS{CACert: "/c.pem", CAKey: "/k.pem", BundleOut: "/s/srt-ca-1/trust-bundle.crt", ExtraCACerts: []string{"/e.pem", "/f.pem"},
		Exclude: []string{"*.pinned.test"}, MaxTunnels: 8, HandshakeTimeout: 1500 * time.Millisecond}
	configs := map[string]Config{
		"defaults":         {},
		"relay-only":       {RelayOnly: true},
		"relay-only-debug": {RelayOnly: true, Debug: true},
		"parent-proxy": {ParentHTTP: "http://proxy.test:3128", ParentHTTPS: "http://user:pw@proxy.test:3129",
			NoProxy: "localhost,.internal.test"},
		"parent-all":      {ParentHTTP: "http://127.0.0.1:3128", ParentAll: true},
		"verdict-timeout": {VerdictTimeout: 10 * time.Minute},
		"rules": {Rules: srtlink.Rules{RefuseOpaqueTunnels: true, RequireHostMatch: true, PlaintextHeaderSet: true,
			AmbiguousTarget: "asSpelled", StripResponseHeaders: []string{"x-secret", "-odd", "Set-Cookie"}}},
		"tls-ephemeral": {TLS: &srtlink.TLS{BundleOut: "/run/srt/srt-ca-1/trust-bundle.crt"}},
		"everything": {ParentHTTPS: "http://p:3128", VerdictTimeout: 10 * time.Minute, Debug: true,
			Rules: srtlink.Rules{RefuseOpaqueTunnels: true, RequireHostMatch: true, AmbiguousTarget: "normalize", StripResponseHeaders: []string{"x-a", "-odd"}},
			TLS:   tls},
		"tls-limits":  {TLS: &srtlink.TLS{MaxTunnels: 65536, HandshakeTimeout: 10 * time.Minute}},
		"mitm":        {MITM: &srtlink.MITM{Socket: "/run/mitm/proxy.sock", Domains: []string{"api.example.com", "*.corp.example", "[::1]"}}},
		"masking":     {PlaintextInject: true, SigV4Streaming: "passthrough", SigV4Presigned: "deny", SigV4A: "passthrough"},
		"masking-one": {SigV4Presigned: "passthrough"},
	}
	for _, c := range srtlinktest.Flags(t) {
		if c.Flags == nil {
			continue // refused: srt never writes it
		}
		cfg, ok := configs[c.Name]
		if !ok {
			t.Errorf("%s: no Config here gives the vector's command line", c.Name)
			continue
		}
		delete(configs, c.Name)
		flags := cfg.ProxyFlags()
		if got := flags.Args(); !reflect.DeepEqual(got, c.Argv) {
			t.Errorf("%s: srt-proxy's command line\n%q\nwant\n%q", c.Name, got, c.Argv)
		}
	}
	for name := range configs {
		t.Errorf("%s: no such vector", name)
	}
}

// handoffPair is an Egress whose handoff channel ends in the test: the
// lines it writes, and the descriptors with them, are read at the other
// end.
func handoffPair(t *testing.T) (*Egress, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	t.Cleanup(func() { theirs.Close() })
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Egress{handoff: conn.(*net.UnixConn), exited: make(chan struct{})}, theirs
}

// srt's side of the handoff vectors (shared/srtlink/handoff.json): every
// line srt sends is its vector's, byte for byte, with its descriptors, and
// srt reads every line srt-proxy sends as its vector says. Every vector of
// a canonical line srt sends must come out of a call here.
func TestHandoffVectors(t *testing.T) {
	e, theirs := handoffPair(t)
	files := func(n int) []*os.File {
		var fs []*os.File
		for range n {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			t.Cleanup(func() { r.Close() })
			fs = append(fs, r)
		}
		return fs
	}
	// receive reads one line and counts the descriptors that came with it.
	receive := func() (string, int) {
		t.Helper()
		buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(8*4))
		n, oobn, _, _, err := unix.Recvmsg(int(theirs.Fd()), buf, oob, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, cm := range cms {
				fds, _ := unix.ParseUnixRights(&cm)
				for _, fd := range fds {
					unix.Close(fd)
				}
				got += len(fds)
			}
		}
		return string(buf[:n]), got
	}
	e.ctl = control.New(&bytes.Buffer{}) // Sync sends only when there is a decider; it writes nothing to it
	e.nextQ = 6                          // the vector's sync is the seventh
	calls := []struct {
		call  func() error
		lines []string // the vectors, in order
	}{
		{func() error { return e.AddListeners("s1", files(2)) }, []string{"listen"}},
		{func() error { return e.AddRelay("s1", 8080, "httpProxyPort", files(2)) }, []string{"listen-relay"}},
		{func() error {
			return e.AddCapture("s1", "srt.dGVzdA==", map[string]string{"127.0.0.1:8765": "localhost", "[::1]:8765": "localhost"}, files(2), files(2))
		}, []string{"listen-capture", "listen-dns"}},
		// A role with no sockets sends nothing.
		{func() error { return e.AddCapture("s2", "srt", nil, files(1), nil) }, []string{"listen-capture-bare"}},
		{func() error { return e.RemoveListeners("s1") }, []string{"close"}},
		{func() error { e.Sync(0); return nil }, []string{"sync"}},
	}
	sent := map[string]srtlinktest.HandoffCase{}
	for _, c := range srtlinktest.Handoff(t) {
		if c.From == "srt" && c.Canonical == "" {
			sent[c.Name] = c
		}
	}
	for _, call := range calls {
		if err := call.call(); err != nil {
			t.Fatalf("%v: %v", call.lines, err)
		}
		for _, name := range call.lines {
			c, ok := sent[name]
			if !ok {
				t.Fatalf("%s: no such vector of srt's", name)
			}
			delete(sent, name)
			if line, n := receive(); line != c.Line+"\n" || n != c.FDs {
				t.Errorf("%s: sent %q with %d descriptors, want %q with %d", name, line, n, c.Line+"\n", c.FDs)
			}
		}
	}
	for name := range sent {
		t.Errorf("%s: no call here sends the vector's line", name)
	}

	// What srt-proxy sends: "ready", or "failed" as a *StartError.
	for _, c := range srtlinktest.Handoff(t) {
		if c.From != "srt-proxy" {
			continue
		}
		if _, err := theirs.WriteString(c.Line + "\n"); err != nil {
			t.Fatal(err)
		}
		err := e.waitReady(5 * time.Second)
		var se *StartError
		switch {
		case c.Message.T == srtlink.TReady && err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case c.Message.T == srtlink.TFailed && (!errors.As(err, &se) || *se != StartError{Setting: c.Message.Setting, Msg: c.Message.Error}):
			t.Errorf("%s: %#v, want a StartError of %+v", c.Name, err, c.Message)
		}
	}

	e.Close()
	if err := e.AddCapture("s3", "srt", nil, files(1), nil); err != ErrStopped {
		t.Errorf("after Close: %v, want ErrStopped", err)
	}
}

// A sync the decider does not answer in time (Sync's violations, an
// update's confirmation) is forgotten: a Manager that lives long and meets
// a slow decider does not keep one entry per unanswered sync. Neither
// waits for processes that have stopped.
func TestUnansweredSyncsAreForgotten(t *testing.T) {
	e, _ := handoffPair(t)
	e.ctl = control.New(&bytes.Buffer{}) // nobody answers
	for range 3 {
		e.Sync(0)
		if err := e.controlSync(0, "the test's"); err == nil {
			t.Fatal("an unanswered sync returned no error")
		}
	}
	// Once the processes have stopped, nobody will answer: no wait.
	close(e.exited)
	if err := e.controlSync(time.Minute, "the test's"); err != ErrStopped {
		t.Errorf("after the processes stopped: %v, want ErrStopped", err)
	}
	start := time.Now()
	e.Sync(time.Minute)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Sync waited %v for stopped processes", d)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.syncs) != 0 {
		t.Errorf("%d syncs kept: %v", len(e.syncs), e.syncs)
	}
}
