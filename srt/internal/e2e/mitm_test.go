//go:build linux

package e2e

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The mitmProxy tests (network.mitmProxy, docs/settings.md): the user's
// MITM proxy is a real HTTP proxy on a Unix socket, here one that records
// each request line and relays to a loopback server, so that what went
// through it and what did not can both be seen.

// mitmProxy is a MITM proxy on a Unix socket: it answers a CONNECT with
// answer and, on a 200, relays the tunnel to relayTo; it relays an
// absolute-form request, request line included, to relayTo.
type mitmProxy struct {
	path    string
	answer  string
	relayTo string
	mu      sync.Mutex
	seen    []string
}

// startMITMProxy listens in the workspace's root (which every runner may
// search), on a socket anyone may connect to: srt-proxy runs as the
// runner.
func startMITMProxy(t *testing.T, w *workspace, answer, relayTo string) *mitmProxy {
	t.Helper()
	m := &mitmProxy{path: filepath.Join(w.root, "mitm.sock"), answer: answer, relayTo: relayTo}
	ln, err := net.Listen("unix", m.path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(m.path, 0o666)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go m.serve(c)
		}
	}()
	return m
}

func (m *mitmProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	m.mu.Lock()
	m.seen = append(m.seen, strings.TrimRight(line, "\r\n"))
	m.mu.Unlock()
	connect := strings.HasPrefix(line, "CONNECT ")
	if connect {
		for {
			h, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if h == "\r\n" {
				break
			}
		}
		io.WriteString(c, m.answer)
		if !strings.HasPrefix(m.answer, "HTTP/1.1 200") {
			return
		}
	}
	up, err := net.Dial("tcp", m.relayTo)
	if err != nil {
		return
	}
	defer up.Close()
	if !connect {
		io.WriteString(up, line)
	}
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite() }()
	io.Copy(c, up)
}

func (m *mitmProxy) lines() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, "\n")
}

// rawConnect is Python that sends srt's HTTP proxy (with the sandbox's
// credentials) a CONNECT to target and prints the whole answer.
func rawConnect(target string) string {
	return `python3 -c '
import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = base64.b64encode((urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)).encode()).decode()
s = socket.create_connection((u.hostname, u.port), 10)
s.sendall(("CONNECT ` + target + ` HTTP/1.1\r\nHost: ` + target + `\r\nProxy-Authorization: Basic " + auth + "\r\n\r\n").encode())
data = b""
while True:
    b = s.recv(4096)
    if not b: break
    data += b
print(data.decode())
'`
}

const connectOK = "HTTP/1.1 200 Connection Established\r\n\r\n"

// mitmSettings: mitm.test and denied.test go to the MITM proxy at socket;
// mitm.test and the loopback entry are allowed, denied.test is not.
func mitmSettings(socket, loopback, extra string) string {
	return netSettings([]string{"mitm.test", loopback}, nil,
		`,"mitmProxy":{"socketPath":"`+socket+`","domains":["mitm.test","denied.test"]}`+extra)
}

// TestMITMProxyClients: curl through srt's HTTP proxy (plain HTTP in
// absolute form; a CONNECT with -p) and through its SOCKS5 proxy, and
// programs that ignore the proxy variables (the namespace captures them),
// all reach a host of mitmProxy.domains through the MITM proxy, as
// "CONNECT host:port" or the absolute-form request, unresolved (mitm.test
// resolves nowhere). An allowed host it does not name goes direct, and a
// refused host it names never reaches it.
func TestMITMProxyClients(t *testing.T) {
	skipOnLandlock(t)
	up, direct := startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		m := startMITMProxy(t, w, connectOK, up.addr())
		s := w.settings(mitmSettings(m.path, direct.addr(), ""))
		r := w.srt("-s", s, "--show-violations", "-c", resetFn+
			`curl -sS http://mitm.test:8080/plain | head -1; `+
			`curl -sS -p http://mitm.test:8081/tunnel | head -1; `+
			`curl -sS -x "$FTP_PROXY" http://mitm.test:8082/socks | head -1; `+
			`curl -sS --noproxy '*' http://mitm.test:8083/captured | head -1; `+
			rawGet("AF_INET", "mitm.test", 8084, "/raw")+"; "+
			`curl -sS http://`+direct.addr()+`/direct | head -1; `+
			`curl -s -o /dev/null -w "denied=%{http_code}\n" http://denied.test:8085/x; `+
			`curl -sS --noproxy '*' http://denied.test:8086/x; echo "denied-captured=$(reset $?)"`)
		expect(t, r, 0,
			"upstream saw GET /plain host=mitm.test:8080",
			"upstream saw GET /tunnel host=mitm.test:8081",
			"upstream saw GET /socks host=mitm.test:8082",
			"upstream saw GET /captured host=mitm.test:8083",
			"answer: upstream saw GET /raw host=raw",
			"upstream saw GET /direct host="+direct.addr(),
			"denied=403", "denied-captured=reset",
			"deny network-outbound denied.test:8085", "deny network-outbound denied.test:8086")
		got := m.lines()
		for _, want := range []string{
			"GET http://mitm.test:8080/plain HTTP/1.1",
			"CONNECT mitm.test:8081 HTTP/1.1", "CONNECT mitm.test:8082 HTTP/1.1",
			"CONNECT mitm.test:8083 HTTP/1.1", "CONNECT mitm.test:8084 HTTP/1.1",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("the MITM proxy did not see %q; it saw\n%s\n%s", want, got, r)
			}
		}
		if strings.Contains(got, "denied.test") || strings.Contains(got, direct.addr()) || strings.Count(got, "\n") != 4 {
			t.Errorf("the MITM proxy saw more than the five allowed mitm.test connections:\n%s", got)
		}
	})
}

// TestMITMProxyFailures: a MITM proxy that refuses the CONNECT, and a
// socket that is not there, give the client a 502 whose reason names the
// socket (and quotes the refusal); a captured connection is reset.
func TestMITMProxyFailures(t *testing.T) {
	skipOnLandlock(t)
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		m := startMITMProxy(t, w, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", up.addr())
		r := w.srt("-s", w.settings(mitmSettings(m.path, up.addr(), "")), "-c", resetFn+
			`curl -s -p -o /dev/null -w "tunnel=%{http_connect}\n" http://mitm.test:8081/; `+
			rawConnect("mitm.test:8082")+"; "+
			`curl -sS --noproxy '*' http://mitm.test:8083/; echo "captured=$(reset $?)"`)
		expect(t, r, 0, "tunnel=502", "captured=reset", "HTTP/1.1 502 upstream unreachable\r\n", "X-Proxy-Error: upstream-unreachable",
			"upstream mitm.test:8082, through the MITM proxy at "+m.path+`: unreachable (refused CONNECT: "HTTP/1.1 403 Forbidden")`)
		if got := m.lines(); !strings.Contains(got, "CONNECT mitm.test:8081") {
			t.Errorf("the MITM proxy saw %q", got)
		}

		missing := filepath.Join(w.root, "missing.sock")
		r = w.srt("-s", w.settings(mitmSettings(missing, up.addr(), "")), "-c",
			`curl -s -w "\nstatus=%{http_code}\n" http://mitm.test:8080/plain`)
		expect(t, r, 0, "status=502", "upstream mitm.test:8080, through the MITM proxy at "+missing+": ", "no such file or directory")
	})
}

// TestMITMProxyRefusedSettings: with tlsTerminate the file is refused with
// the reference's message; a socketPath that is not a socket stops srt
// before the command runs, naming the setting.
func TestMITMProxyRefusedSettings(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.srt("-s", w.settings(mitmSettings("/run/mitm.sock", "127.0.0.1:9", `,"tlsTerminate":{}`)), "-c", "echo ran")
		expect(t, r, 1, "network.mitmProxy: network.tlsTerminate and network.mitmProxy are mutually exclusive", "!ran")

		file := w.write("not-a-socket", "")
		r = w.srt("-s", w.settings(mitmSettings(file, "127.0.0.1:9", "")), "-c", "echo ran; curl -s http://mitm.test/")
		expect(t, r, 1, "network.mitmProxy.socketPath: "+file+" is not a Unix socket (it is a regular file); give the socket the MITM proxy listens on", "!ran")
	})
}
