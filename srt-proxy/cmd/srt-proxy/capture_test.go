//go:build linux

package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// pyClient connects to host port (its first address only: a second
// attempt would be a second connection) from inside the sandbox, sends an HTTP
// request, half-closes and prints "data <body>", "reset" when the
// connection was reset (a reset that comes before connect returns too),
// or "connect <error>" when it could not connect. With two more
// arguments, a server name and a CA file, it speaks TLS with that server
// name, trusting only that CA, and asks for name:port; then any failure
// prints "error <error>".
const pyClient = `
import errno, socket, ssl, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    s = socket.socket(family, kind, proto)
    s.settimeout(10)
    s.connect(addr)
except ConnectionResetError:
    print("reset"); sys.exit(0)
except OSError as e:
    print("connect", type(e).__name__); sys.exit(0)
try:
    req = b"GET / HTTP/1.0\r\nHost: t\r\n\r\n"
    if len(sys.argv) > 3:
        s = ssl.create_default_context(cafile=sys.argv[4]).wrap_socket(s, server_hostname=sys.argv[3])
        req = ("GET / HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (sys.argv[3], port)).encode()
    s.sendall(req)
    if len(sys.argv) == 3:
        s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        d = s.recv(65536)
        if not d: break
        data += d
    print("data", data.decode(errors="replace").split("\r\n\r\n", 1)[-1])
except (ConnectionResetError, BrokenPipeError):
    print("reset")
except OSError as e:
    # shutdown after the reset arrived: the socket is closed already
    print("reset" if e.errno == errno.ENOTCONN else "error %s %s" % (type(e).__name__, e))
except Exception as e:
    print("error", type(e).__name__, e)
`

// webServer answers every request on l with body, once, and closes.
func webServer(t *testing.T, l net.Listener, body string) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
}

func listen(t *testing.T, network, addr string) (net.Listener, int) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	return l, l.Addr().(*net.TCPAddr).Port
}

// Every TCP connection a program in the sandbox makes, whatever the
// program and the port, IPv4 and IPv6, by name or by address, is decided
// by the decider as a CONNECT to where it was going, attributed to the
// sandbox: allowed ones go through, denied ones are reset and recorded.
func TestCapture(t *testing.T) {
	needTools(t, "python3", "curl", "dig", "getent")
	l4, up := listen(t, "tcp4", "127.0.0.1:0")
	webServer(t, l4, "hello")
	l6, up6 := listen(t, "tcp6", "[::1]:0")
	webServer(t, l6, "hello6")

	const key = "cmd-1"
	user := srtlink.UserFor(key)
	network := control.Network{
		AllowedDomains: []string{"allowed.test", "127.0.0.1:" + strconv.Itoa(up), "localhost:" + strconv.Itoa(up6)},
		DeniedDomains:  []string{"denied.test"},
	}
	hosts := "127.0.0.1 localhost allowed.test late.test percmd.test denied.test\n::1 localhost\n"
	e := startEgress(t, network, hosts)
	ns := newSandboxNS(t, up, up6)
	e.hand("s1", user, map[string]string{"[::1]:" + strconv.Itoa(up6): "localhost", "127.0.0.1:" + strconv.Itoa(up6): "localhost"}, ns)

	py := func(host string, port int) string {
		t.Helper()
		out, code := ns.run(t, "python3", "-c", pyClient, host, strconv.Itoa(port))
		if code != 0 {
			t.Fatalf("python3 to %s:%d: exit %d\n%s", host, port, code, out)
		}
		return strings.TrimSpace(out)
	}
	curl := func(args ...string) (string, int) {
		return ns.run(t, append([]string{"curl", "-sS", "--noproxy", "*", "--max-time", "10"}, args...)...)
	}
	noViolations := func(what string) {
		t.Helper()
		if v := e.settle(); len(v) > 0 {
			t.Errorf("%s: violations %q", what, v)
		}
	}
	violation := func(what, want string) {
		t.Helper()
		if v := e.settle(); len(v) != 1 || !strings.HasPrefix(v[0], user+": "+want) {
			t.Errorf("%s: violations %q, want one starting %q", what, v, user+": "+want)
		}
	}

	t.Run("a raw socket to an allowed host loopback port", func(t *testing.T) {
		if got := py("127.0.0.1", up); got != "data hello" {
			t.Fatalf("python3 got %q", got)
		}
		e.record("host=127.0.0.1", "port="+strconv.Itoa(up), "decision=allow", "user="+user)
		noViolations("allowed")
	})
	t.Run("curl ignoring the proxy variables, by name", func(t *testing.T) {
		if out, code := curl("http://allowed.test:" + strconv.Itoa(up) + "/"); code != 0 || out != "hello" {
			t.Fatalf("curl: exit %d, %q", code, out)
		}
		e.record("host=allowed.test", "decision=allow")
		out, _ := ns.run(t, "getent", "ahostsv4", "allowed.test")
		if !strings.HasPrefix(out, "198.18.1") {
			t.Errorf("getent ahostsv4 allowed.test: %q, want a fake address", out)
		}
	})
	t.Run("IPv6, by name", func(t *testing.T) {
		if out, code := curl("-6", "http://allowed.test:"+strconv.Itoa(up)+"/"); code != 0 || out != "hello" {
			t.Fatalf("curl -6: exit %d, %q", code, out)
		}
		out, _ := ns.run(t, "getent", "ahostsv6", "allowed.test")
		if !strings.HasPrefix(out, "fd00:5253:0:1::") {
			t.Errorf("getent ahostsv6 allowed.test: %q, want a fake address", out)
		}
	})
	t.Run("IPv6 to a [::1] port named by a localhost entry", func(t *testing.T) {
		if got := py("::1", up6); got != "data hello6" {
			t.Fatalf("python3 got %q", got)
		}
		e.record("host=localhost", "port="+strconv.Itoa(up6), "decision=allow")
		noViolations("localhost")
	})
	t.Run("python resolving and connecting", func(t *testing.T) {
		if got := py("allowed.test", up); got != "data hello" {
			t.Fatalf("python3 got %q", got)
		}
	})
	t.Run("a denied address is reset and recorded", func(t *testing.T) {
		if got := py("192.0.2.1", 80); got != "reset" {
			t.Fatalf("python3 got %q, want a reset", got)
		}
		e.record("host=192.0.2.1", "port=80", "decision=deny")
		violation("192.0.2.1", "deny network-outbound 192.0.2.1:80 (")
	})
	t.Run("a denied name is reset and recorded by name", func(t *testing.T) {
		if got := py("denied.test", 443); got != "reset" {
			t.Fatalf("python3 got %q, want a reset", got)
		}
		e.record("host=denied.test", "port=443", "decision=deny")
		violation("denied.test", "deny network-outbound denied.test:443 (")
	})
	t.Run("a fake address that stands for no name", func(t *testing.T) {
		if got := py("198.18.250.250", 80); got != "reset" {
			t.Fatalf("python3 got %q, want a reset", got)
		}
		e.record("host=198.18.250.250", "decision=deny", "stands for no name")
		noViolations("unknown fake address (nobody was asked)")
	})
	t.Run("the capture port itself", func(t *testing.T) {
		if got := py("127.0.0.1", ns.port); got != "reset" {
			t.Fatalf("python3 got %q, want a reset", got)
		}
		e.record("host=127.0.0.1", "port="+strconv.Itoa(ns.port), "decision=deny", "reason=\"a connection to the capture port itself\"")
		noViolations("the capture port (nobody was asked)")
	})
	t.Run("DNS: other types get no data, over UDP and TCP", func(t *testing.T) {
		for _, mode := range []string{"+notcp", "+tcp"} {
			out, code := ns.run(t, "dig", mode, "+tries=1", "+time=5", "example.com", "TXT")
			if code != 0 || !strings.Contains(out, "status: NOERROR") || !strings.Contains(out, "ANSWER: 0,") {
				t.Errorf("dig %s TXT: exit %d\n%s", mode, code, out)
			}
			out, code = ns.run(t, "dig", mode, "+short", "+tries=1", "+time=5", "allowed.test", "A")
			if code != 0 || !strings.HasPrefix(out, "198.18.1") {
				t.Errorf("dig %s A: exit %d, %q", mode, code, out)
			}
		}
	})
	t.Run("a --control-fd update applies to the next captured connection", func(t *testing.T) {
		if got := py("late.test", up); got != "reset" {
			t.Fatalf("before the update: %q, want a reset", got)
		}
		violation("late.test before", "deny network-outbound late.test:"+strconv.Itoa(up)+" (")
		n := network
		n.AllowedDomains = append(append([]string(nil), n.AllowedDomains...), "late.test")
		e.control(&control.Message{T: control.TConfig, Network: &n})
		if got := py("late.test", up); got != "data hello" {
			t.Fatalf("after the update: %q", got)
		}
		e.control(&control.Message{T: control.TConfig, Network: &network})
	})
	t.Run("the command's own list, by its attribution user", func(t *testing.T) {
		e.control(&control.Message{T: control.TRegister, ID: key, AllowedDomains: []string{"percmd.test"}})
		if got := py("percmd.test", up); got != "data hello" {
			t.Fatalf("registered: %q", got)
		}
		e.control(&control.Message{T: control.TUnregister, ID: key})
		if got := py("percmd.test", up); got != "reset" {
			t.Fatalf("unregistered: %q, want a reset", got)
		}
		violation("percmd.test", "deny network-outbound percmd.test:"+strconv.Itoa(up)+" (")
	})
}

// With tlsTerminate, a captured connection is terminated as an allowed
// CONNECT is: the client sees a certificate of srt-proxy's CA, each
// request inside is decided, requireHostMatch applies. To an IP address,
// the ClientHello's server name says which host it is for.
func TestCaptureTLS(t *testing.T) {
	needTools(t, "python3", "curl")
	upstreamCA, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := upstreamCA.Server("secure.test")
	if err != nil {
		t.Fatal(err)
	}
	l, ups := listen(t, "tcp4", "127.0.0.1:0")
	webServer(t, tls.NewListener(l, cfg), "secret")

	dir := t.TempDir()
	mitmPEM := testCA(t) // the key, then the certificate
	mitm := filepath.Join(dir, "mitm.pem")
	mitmCert := filepath.Join(dir, "mitm-cert.pem")
	upstreamCert := filepath.Join(dir, "upstream-ca.pem")
	for f, b := range map[string][]byte{mitm: mitmPEM, mitmCert: mitmPEM[bytes.Index(mitmPEM, []byte("-----BEGIN CERTIFICATE")):], upstreamCert: upstreamCA.PEM} {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	network := control.Network{AllowedDomains: []string{"secure.test", "127.0.0.1:" + strconv.Itoa(ups)}}
	e := startEgress(t, network, "127.0.0.1 secure.test\n", "--tls-terminate", "--tls-ca-cert", mitm, "--tls-ca-key", mitm,
		"--tls-bundle-out", filepath.Join(dir, "bundle.crt"), "--tls-extra-ca", upstreamCert, "--require-host-match")
	ns := newSandboxNS(t)
	e.hand("s1", "srt.tls", nil, ns)
	port := strconv.Itoa(ups)

	t.Run("by name, trusting only srt-proxy's CA", func(t *testing.T) {
		out, code := ns.run(t, "curl", "-sS", "--noproxy", "*", "--max-time", "10", "--cacert", mitmCert, "https://secure.test:"+port+"/")
		if code != 0 || out != "secret" {
			t.Fatalf("curl: exit %d, %q", code, out)
		}
		e.record("host=secure.test", "port="+port, "decision=allow", "kind=capture")
	})
	t.Run("requireHostMatch inside the captured tunnel", func(t *testing.T) {
		out, _ := ns.run(t, "curl", "-sS", "-i", "--noproxy", "*", "--max-time", "10", "--cacert", mitmCert, "-H", "Host: other.test", "https://secure.test:"+port+"/")
		if !strings.HasPrefix(out, "HTTP/1.1 421 ") || !strings.Contains(out, "Host header does not match the request target") {
			t.Fatalf("curl got %q, want 421", out)
		}
	})
	t.Run("to an address, the server name decides", func(t *testing.T) {
		out, code := ns.run(t, "python3", "-c", pyClient, "192.0.2.9", port, "secure.test", mitmCert)
		if code != 0 || strings.TrimSpace(out) != "data secret" {
			t.Fatalf("python3: exit %d, %q", code, out)
		}
		e.record("host=secure.test", "port="+port, "decision=allow")
	})
	t.Run("to an address, a server name not allowed", func(t *testing.T) {
		out, _ := ns.run(t, "python3", "-c", pyClient, "192.0.2.9", port, "other.test", mitmCert)
		if strings.TrimSpace(out) != "reset" {
			t.Fatalf("python3: %q, want a reset", out)
		}
		e.record("host=other.test", "port="+port, "decision=deny")
		if v := e.settle(); len(v) != 1 || !strings.HasPrefix(v[0], "srt.tls: deny network-outbound other.test:"+port+" (") {
			t.Errorf("violations %q", v)
		}
	})
}
