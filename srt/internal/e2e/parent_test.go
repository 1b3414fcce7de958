//go:build linux

package e2e

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// parentProxy is a loopback HTTP proxy that records what it is asked and
// answers every CONNECT with 502, so nothing leaves the machine.
type parentProxy struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startParentProxy(t *testing.T) *parentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &parentProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				p.mu.Lock()
				p.seen = append(p.seen, req.Method+" "+req.RequestURI)
				p.mu.Unlock()
				c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"))
			}(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *parentProxy) requests() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.seen, "\n")
}

func TestParentProxyFromTheEnvironment(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		parent := startParentProxy(t)
		s := w.settings(netSettings([]string{"x.test"}, nil, ""))
		// srt's own HTTPS_PROXY is the parent for tunnels, HTTP_PROXY for
		// plain HTTP; the sandbox's variables are srt's own proxies.
		env := []string{"HTTPS_PROXY=http://" + parent.ln.Addr().String(), "HTTP_PROXY=http://" + parent.ln.Addr().String()}
		r := w.srtEnv(env, "-s", s, "-c", `curl -s -o /dev/null -w "%{http_code}\n" https://x.test/; curl -s -o /dev/null -w "%{http_code}\n" http://x.test/page; curl -s -o /dev/null -w "%{http_code}\n" https://other.test/`)
		if !strings.Contains(parent.requests(), "CONNECT x.test:443") || !strings.Contains(parent.requests(), "GET http://x.test/page") {
			t.Fatalf("the parent proxy saw %q\n%s", parent.requests(), r)
		}
		if strings.Contains(parent.requests(), "other.test") {
			t.Fatalf("a refused host reached the parent proxy: %q", parent.requests())
		}
		// The parent refuses every tunnel (502), so curl's tunnels fail
		// (exit 56); the plain request gets the parent's 502.
		expect(t, r, 56)
		if r.stdout != "000\n502\n000\n" {
			t.Fatalf("status codes: %s", r)
		}
	})
}

func TestParentProxyFromSettings(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		parent := startParentProxy(t)
		s := w.settings(netSettings([]string{"x.test"}, nil, `,"parentProxy":{"https":"http://`+parent.ln.Addr().String()+`","noProxy":"direct.test"}`))
		r := w.srt("-s", s, "-c", `curl -s -o /dev/null -w "%{http_code}\n" https://x.test/`)
		if !strings.Contains(parent.requests(), "CONNECT x.test:443") {
			t.Fatalf("the parent proxy saw %q\n%s", parent.requests(), r)
		}
	})
}

// TestParentProxyIsReadAtStart (issue 14, item 14): srt-proxy reads
// network.parentProxy when it starts, and a live update that changed it
// was ignored without a word. Now srt says so, as for the other settings
// read at start, and the connections still go through the parent it
// started with.
func TestParentProxyIsReadAtStart(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		first, second := startParentProxy(t), startParentProxy(t)
		parent := func(p *parentProxy) string {
			return `,"parentProxy":{"https":"http://` + p.ln.Addr().String() + `"}`
		}
		s := w.settings(netSettings([]string{"x.test"}, nil, parent(first)))
		out := &syncBuffer{}
		cmd, wr := w.startControlled(nil, out, out, "-s", s, "-c", `curl -s -o /dev/null https://x.test/a; echo first-done; while [ ! -e go ]; do sleep 0.05; done; curl -s -o /dev/null https://x.test/b`)
		waitFor(t, func() bool { return strings.Contains(out.String(), "first-done") }, "the first request:\n"+out.String())
		wr.Write([]byte(netSettings([]string{"x.test"}, nil, parent(second)) + "\n"))
		waitFor(t, func() bool { return strings.Contains(out.String(), "network.parentProxy") }, "the warning:\n"+out.String())
		w.write("home/proj/go", "")
		waitExit(t, cmd, out)
		expect(t, result{stdout: out.String()}, 0, "srt: warning: the update changes network.parentProxy, which the network proxy reads only when it starts; the running proxy keeps the values it started with")
		if got := strings.Count(first.requests(), "CONNECT x.test:443"); got != 2 || second.requests() != "" {
			t.Errorf("the parent it started with saw %d CONNECTs (want 2), the updated one %q", got, second.requests())
		}
	})
}
