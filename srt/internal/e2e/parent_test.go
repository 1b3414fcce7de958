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
