//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// srt-proxy's side of the contracts with srt (decider/srtlink), run on
// the vectors of shared/srtlink that srt's tests run on their side.

// Every command line srt writes is read as its vector's flags, and every
// refused one is refused with its vector's error, said after
// "srt-proxy: " with exit 2.
func TestSRTLinkFlagsVectors(t *testing.T) {
	// What srt writes must get past the checks made before either mode
	// looks at the command line.
	for _, name := range srtlink.ProxyFlagNames() {
		if optionsByName[name] == nil {
			t.Errorf("srtlink's flag %s is not one of srt-proxy's options", name)
		}
	}
	srtMode := strings.Join(srtlink.ProxyFlagNames(), " ") + " "
	for _, name := range srtModeOnly {
		if !strings.Contains(srtMode, "--"+name+" ") {
			t.Errorf("srtModeOnly names --%s, which is no flag of srtlink's", name)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range srtlinktest.Flags(t) {
		if c.Flags == nil {
			p := spawn(t, c.Argv, []*os.File{r, r}, nil)
			if code, rest := p.exit(); code != exitUsage || rest != "srt-proxy: "+c.Error {
				t.Errorf("%s: exit %d, stderr %q; want %d, %q", c.Name, code, rest, exitUsage, "srt-proxy: "+c.Error)
			}
			continue
		}
		norm, err := normalizeArgs(c.Argv)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		o, err := srtModeOptions(norm)
		if err != nil || !reflect.DeepEqual(o.ProxyFlags, *c.Flags) {
			t.Errorf("%s: read %+v, %v; want %+v", c.Name, o.ProxyFlags, err, *c.Flags)
			continue
		}
		rl := c.Flags.Rules
		if o.rules.RefuseOpaqueTunnels != rl.RefuseOpaqueTunnels || o.rules.RequireHostMatch != rl.RequireHostMatch ||
			o.rules.PlaintextHeaderSet != rl.PlaintextHeaderSet || !reflect.DeepEqual(o.rules.StripResponseHeaders, rl.StripResponseHeaders) ||
			o.rules.CheckPlainTargets != (rl.AmbiguousTarget != "") || (rl.AmbiguousTarget != "" && o.rules.AmbiguousTarget != targetModes[rl.AmbiguousTarget]) {
			t.Errorf("%s: the proxy's rules %+v are not the flags' %+v", c.Name, o.rules, rl)
		}
		mode := func(v string) rules.SigV4Mode {
			if v == srtlink.SigV4Passthrough {
				return rules.SigV4Passthrough
			}
			return rules.SigV4Deny
		}
		f := c.Flags
		if o.rules.PlaintextInject != f.PlaintextInject || o.rules.SigV4Streaming != mode(f.SigV4Streaming) ||
			o.rules.SigV4Presigned != mode(f.SigV4Presigned) || o.rules.SigV4A != mode(f.SigV4A) {
			t.Errorf("%s: the proxy's inject rules %+v are not the flags' %+v", c.Name, o.rules, f)
		}
	}
	for _, v := range srtlink.AmbiguousTargets {
		if _, ok := targetModes[v]; !ok {
			t.Errorf("--ambiguous-target %s has no mode", v)
		}
	}
}

// srt-proxy says what its vectors say: "ready" once it serves, "failed"
// and why when its CA cannot be used, byte for byte.
func TestSRTLinkHandoffVectorsSent(t *testing.T) {
	dir := t.TempDir()
	both, other := filepath.Join(dir, "both.pem"), filepath.Join(dir, "other.pem")
	os.WriteFile(both, testCA(t), 0o600)
	os.WriteFile(other, testCA(t), 0o600)
	args := map[string][]string{
		"ready":          nil,
		"failed-setting": {"--tls-terminate", "--tls-ca-cert", both, "--tls-ca-key", other},
		// Relative to srt-proxy's working directory, where it is not.
		"failed-escaped": {"--tls-terminate", "--tls-ca-cert", "x<y>&z.pem", "--tls-ca-key", "x<y>&z.pem"},
	}
	for _, c := range srtlinktest.Handoff(t) {
		if c.From != "srt-proxy" {
			continue
		}
		a, ok := args[c.Name]
		if !ok {
			t.Errorf("%s: no command line here makes srt-proxy send the vector's line", c.Name)
			continue
		}
		delete(args, c.Name)
		if line, _ := srtModeProxyLine(t, a...); line != c.Encoded()+"\n" {
			t.Errorf("%s: srt-proxy said %q, want %q", c.Name, line, c.Encoded()+"\n")
		}
	}
	for name := range args {
		t.Errorf("%s: no such vector of srt-proxy's", name)
	}
}

// Every line srt sends, as its vector spells it and with its descriptors,
// does what it says: a proxy listener is served, a name server socket
// answers, "close" closes every socket of the sandbox, a sync reaches the
// decider; srt-proxy stops on none of them.
func TestSRTLinkHandoffVectorsReceived(t *testing.T) {
	d, ctl, p := srtModeServing(t)
	// socket makes a socket to hand over (our copy closed: srt-proxy
	// holds its own) and returns it as a file, with its address.
	socket := func(network string) (*os.File, string) {
		var fc interface {
			File() (*os.File, error)
			Close() error
		}
		var addr string
		if network == "udp" {
			c, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fc, addr = c.(*net.UDPConn), c.LocalAddr().String()
		} else {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fc, addr = l.(*net.TCPListener), l.Addr().String()
		}
		f, err := fc.File()
		if err != nil {
			t.Fatal(err)
		}
		fc.Close()
		return f, addr
	}
	tcpBy := map[string][]string{} // the TCP listeners handed over, by sandbox
	for _, c := range srtlinktest.Handoff(t) {
		if c.From != "srt" {
			continue
		}
		var files []*os.File
		var proxies, names []string
		for i := range c.FDs {
			var f *os.File
			var addr string
			if c.Message.Role == srtlink.RoleDNS && i == 0 {
				f, addr = socket("udp")
				names = append(names, addr)
			} else {
				f, addr = socket("tcp")
				tcpBy[c.Message.ID] = append(tcpBy[c.Message.ID], addr)
				if c.Message.Role == srtlink.RoleProxy && c.Message.Relay == nil {
					proxies = append(proxies, addr)
				}
			}
			files = append(files, f)
		}
		var oob []byte
		if len(files) > 0 {
			fds := make([]int, len(files))
			for i, f := range files {
				fds[i] = int(f.Fd())
			}
			oob = syscall.UnixRights(fds...)
		}
		if _, _, err := ctl.WriteMsgUnix([]byte(c.Line+"\n"), oob, nil); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, f := range files {
			f.Close()
		}
		switch {
		case len(proxies) > 0:
			for _, addr := range proxies {
				if got := proxyAnswer(t, addr); !strings.HasPrefix(got, "HTTP/1.1 407 ") {
					t.Errorf("%s: the listener on %s answered %q, want 407 (no credentials)", c.Name, addr, got)
				}
			}
		case len(names) > 0:
			for _, addr := range names {
				if err := dnsAnswers(addr); err != nil {
					t.Errorf("%s: the name server on %s: %v", c.Name, addr, err)
				}
			}
		case c.Message.T == srtlink.TClose:
			for _, addr := range tcpBy[c.Message.ID] {
				if err := refusesSoon(addr); err != nil {
					t.Errorf("%s: the listener on %s: %v", c.Name, addr, err)
				}
			}
			delete(tcpBy, c.Message.ID)
		case c.Message.T == srtlink.TSync:
			if got, want := string(d.next()), fmt.Sprintf(`{"t":"sync","id":%d}`, c.Message.Q); got != want {
				t.Errorf("%s: the decider got %q, want %q", c.Name, got, want)
			}
		}
	}
	select {
	case <-p.done:
		t.Fatalf("srt-proxy stopped (exit %d)", p.code)
	default:
	}
}

// proxyAnswer is the first line of the answer to a plain-HTTP request
// without credentials sent to the proxy listener on addr.
func proxyAnswer(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return line + "<" + err.Error() + ">"
	}
	return line
}

// dnsAnswers asks the name server on addr (UDP) for x.test's A record and
// checks that an answer to that query comes.
func dnsAnswers(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	q := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'x', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1}
	if _, err := c.Write(q); err != nil {
		return err
	}
	b := make([]byte, 512)
	n, err := c.Read(b)
	if err != nil {
		return err
	}
	if n < 12 || b[0] != 0x12 || b[1] != 0x34 || b[2]&0x80 == 0 {
		return errors.New("the answer is not one to the query: " + base64.StdEncoding.EncodeToString(b[:n]))
	}
	return nil
}

// refusesSoon waits (at most 5 s) until connections to addr are refused:
// srt-proxy closed its listener, and nothing else holds it.
func refusesSoon(addr string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		if c != nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			return errors.New("connections are still accepted (or not refused) 5 s after the close")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every attribution user srt makes reaches the decider as it is, from the
// HTTP proxy's credentials (Basic) and from SOCKS5's (RFC 1929, which
// carries at most 255 bytes, srtlink.MaxUser).
func TestSRTLinkUsers(t *testing.T) {
	d, ctl, _ := srtModeServing(t)
	addr := handListener(t, ctl, "s")

	users := map[string]bool{}
	for _, c := range srtlinktest.Keys(t) {
		users[c.User] = true
	}
	for _, c := range srtlinktest.Users(t) {
		if c.User != "" { // no credentials at all: a 407 before any question
			users[c.User] = true
		}
	}
	ask := func(user, how string, hello []byte) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(hello)
		id, req := nextReqExt(t, d)
		if req.User != user {
			t.Errorf("%s: the decider was asked for user %q, want %q", how, req.User, user)
		}
		d.send(verdict(id, `"action":"deny","status":403`))
	}
	for user := range users {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + testToken))
		ask(user, "HTTP", []byte("CONNECT x.test:443 HTTP/1.1\r\nHost: x.test:443\r\nProxy-Authorization: Basic "+auth+"\r\n\r\n"))
		var socks bytes.Buffer
		socks.Write([]byte{5, 1, 2, 1, byte(len(user))})
		socks.WriteString(user)
		socks.WriteByte(byte(len(testToken)))
		socks.WriteString(testToken)
		socks.Write([]byte{5, 1, 0, 3, 6})
		socks.WriteString("x.test")
		socks.Write([]byte{1, 187})
		ask(user, "SOCKS5", socks.Bytes())
	}
}
