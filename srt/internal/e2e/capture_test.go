//go:build linux

package e2e

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The capture tests: programs that ignore the proxy variables, reaching
// the host through srt's network namespace (docs/architecture.md, "The
// network namespace"). Every one runs as root and as the unprivileged
// runner, with real clients inside.

// rawGet is Python that connects to host:port with a plain socket (no
// proxy), sends a GET and prints the first line of the answer, or the
// errno of the failure.
func rawGet(family, host string, port int, path string) string {
	return fmt.Sprintf(`python3 -c '
import socket, sys
try:
    s = socket.socket(socket.%s, socket.SOCK_STREAM); s.settimeout(10)
    s.connect((%q, %d))
    s.sendall(b"GET %s HTTP/1.0\r\nHost: raw\r\n\r\n")
    data = b""
    while True:
        b = s.recv(4096)
        if not b: break
        data += b
    print("answer:", data.split(b"\r\n\r\n", 1)[-1].decode().splitlines()[0] if data else "none")
except OSError as e:
    print("errno:", e.errno)
'`, family, host, port, path)
}

// TestCaptureLoopbackEntry: an allowedDomains entry naming a host
// loopback address and port leads that port inside to the host's service,
// for a raw socket and for curl told to ignore every proxy; a loopback
// port no entry names stays the sandbox's own; a listed port the lists
// deny is reset, and the refusal is a violation.
func TestCaptureLoopbackEntry(t *testing.T) {
	skipOnLandlock(t)
	up, other, denied := startUpstream(t), startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := netSettings([]string{up.addr(), "localhost:" + itoa(denied.port)}, []string{denied.addr()}, "")
		r := w.srt("-s", w.settings(s), "--show-violations", "-c",
			rawGet("AF_INET", "127.0.0.1", up.port, "/raw")+"; "+
				"curl -sS --noproxy '*' http://"+up.addr()+"/curl | head -1; "+
				rawGet("AF_INET", "127.0.0.1", other.port, "/other")+"; "+
				rawGet("AF_INET", "127.0.0.1", denied.port, "/denied"))
		expect(t, r, 0,
			"answer: upstream saw GET /raw host=raw",
			"upstream saw GET /curl host="+up.addr(),
			"errno: 111\n", // ECONNREFUSED: nothing listens on the sandbox's own port
			"errno: 104\n", // ECONNRESET: decided and refused
			"<sandbox_violations>",
			":"+itoa(denied.port),
			"!upstream saw GET /other", "!upstream saw GET /denied")
	})
}

// TestCaptureIPv6Loopback: the same for "[::1]:port".
func TestCaptureIPv6Loopback(t *testing.T) {
	skipOnLandlock(t)
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("NOT TESTED: this host has no IPv6 loopback: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nhello from the host's ::1\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(netSettings([]string{"[::1]:" + itoa(port)}, nil, ""), rawGet("AF_INET6", "::1", port, "/")+"; "+rawGet("AF_INET6", "::1", port+1, "/"))
		expect(t, r, 0, "answer: hello from the host's ::1", "errno: 111")
	})
}

// captureHosts: app.test and evil.test resolve to the host's loopback on
// the host (srt-proxy's side). The sandbox may not read /etc/hosts, so its
// programs ask the sandbox's resolver, srt-proxy's fake addresses.
// resetFn is a shell function for scripts: "reset" for curl's exit
// statuses of a connection the proxy reset (7 when the reset comes before
// curl sees the connection complete, 55 while it sends the request, 56
// after), else the status.
const resetFn = `reset() { case $1 in 7|55|56) echo reset;; *) echo "$1";; esac; }; `

const captureHosts = "127.0.0.1 localhost\n127.0.0.1 app.test\n127.0.0.1 evil.test\n127.0.0.1 git.test\n"

func captureNameSettings(allowed []string, extra string) string {
	q := `["` + strings.Join(allowed, `","`) + `"]`
	return `{"network":{"allowedDomains":` + q + `,"deniedDomains":[]` + extra + `},"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`
}

// TestCaptureNames: names resolve inside through srt-proxy's resolver to
// fake addresses (no query leaves), and a connection to one is decided by
// the name the program asked for: allowed → through, not allowed → reset
// and a violation naming it. Other record types get no data.
func TestCaptureNames(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		// app.test resolves to loopback on the host: the literal entry
		// admits that address (the resolved-address check, as for CONNECT).
		s := w.settings(captureNameSettings([]string{"app.test", "127.0.0.1:" + itoa(up.port)}, ""))
		r := w.withHosts(captureHosts, "-s", s, "--show-violations", "-c", resetFn+
			`dig +short app.test A; dig +short app.test AAAA; echo "txt=[$(dig +short app.test TXT)]"; dig app.test TXT | grep -o 'status: [A-Z]*'; `+
			`getent hosts app.test | awk '{print "getent", $1}'; getent ahostsv4 app.test | awk 'NR==1 {print "getent", $1}'; `+
			`curl -sS --noproxy '*' http://app.test:`+itoa(up.port)+`/named | head -1; `+
			`python3 -c 'import socket; a = socket.getaddrinfo("app.test", `+itoa(up.port)+`, socket.AF_INET)[0][4]; s = socket.create_connection(a, 10); s.sendall(b"GET /py HTTP/1.0\r\nHost: app.test\r\n\r\n"); print(s.recv(200).decode().split("\r\n\r\n")[1].splitlines()[0])'; `+
			`curl -sS --noproxy '*' http://evil.test:`+itoa(up.port)+`/evil; echo "evil-exit=$(reset $?)"`)
		expect(t, r, 0, "198.18.128.", "fd00:5253:0:1::", "txt=[]", "status: NOERROR",
			"getent 198.18.128.", "getent fd00:5253:0:1::",
			"upstream saw GET /named host=app.test:"+itoa(up.port),
			"upstream saw GET /py host=app.test",
			"evil-exit=reset", "deny network-outbound evil.test:"+itoa(up.port)+" (host is not on the allow list)",
			"!upstream saw GET /evil")
	})
}

// TestCaptureUDP: no UDP leaves the sandbox: a datagram to the host's
// loopback stays inside (the sandbox's own loopback), one to any other
// address is refused at the send (EPERM), and the host's server gets
// nothing.
func TestCaptureUDP(t *testing.T) {
	skipOnLandlock(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	var got atomic.Int32
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(netSettings([]string{"127.0.0.1:" + itoa(port), "198.18.200.9"}, nil, ""), `python3 -c '
import socket
for addr in ("127.0.0.1", "198.18.200.9", "::1"):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        s.sendto(b"out", (addr, `+itoa(port)+`)); print(addr, "sent")
    except OSError as e: print(addr, "errno", e.errno)
'`)
		expect(t, r, 0, "127.0.0.1 sent", "198.18.200.9 errno 1\n")
		time.Sleep(200 * time.Millisecond)
		if n := got.Load(); n != 0 {
			t.Fatalf("the host's UDP server got %d datagrams", n)
		}
	})
}

// TestCaptureSSH: plain ssh and git over SSH, with no proxy settings at
// all, reach an allowed host:22-style server by name; the same host off
// the list is refused.
func TestCaptureSSH(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		srv := startSSHD(t, w)
		repo := bareRepo(t, w, "over ssh, captured\n")
		w.write("home/.ssh/config", "Host git.test\n  IdentityFile "+w.path("home/.ssh/id_ed25519")+"\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
		os.Chmod(w.path("home/.ssh/config"), 0o600)
		w.chown(w.path("home/.ssh/config"))
		url := fmt.Sprintf("ssh://%s@git.test:%d%s", w.r.name, srv.port, repo)
		// No ProxyCommand: ssh connects by itself, and is captured.
		plain := `unset GIT_SSH_COMMAND HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy; export GIT_SSH_COMMAND="ssh -F $HOME/.ssh/config"; `
		s := w.settings(captureNameSettings([]string{"git.test:" + strconv.Itoa(srv.port), "127.0.0.1:" + strconv.Itoa(srv.port)}, ""))
		r := w.withHosts(captureHosts, "-s", s, "-c", plain+`ssh -F $HOME/.ssh/config -p `+itoa(srv.port)+` `+w.r.name+`@git.test echo ran-over-ssh; git clone -q -b main `+url+` out && cat out/README`)
		expect(t, r, 0, "ran-over-ssh", "over ssh, captured")
		off := w.settings(captureNameSettings([]string{"127.0.0.1:1"}, ""))
		r = w.withHosts(captureHosts, "-s", off, "-c", plain+`git clone -q `+url+` out2; echo "exit=$?"`)
		expect(t, r, 0, "exit=128", "!over ssh, captured")
	})
}

// TestCaptureTLSTerminate: a captured HTTPS connection is terminated like
// a CONNECT tunnel: the client trusts the sandbox's bundle, the upstream
// sees the request, requireHostMatch refuses a Host header that is not
// the name connected to (421, as for a CONNECT tunnel).
func TestCaptureTLSTerminate(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":["tls.test","127.0.0.1:` + itoa(up.port) + `"],"deniedDomains":[],"requireHostMatch":true,` +
			`"tlsTerminate":{"extraCaCertPaths":["` + up.caFile(w) + `"]}},"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`)
		target := "https://" + up.https("tls.test")
		r := w.withHosts(upstreamHosts, "-s", s, "--show-violations", "-c",
			`curl -sS --noproxy '*' `+target+`/captured | head -1; `+
				`curl -sS --noproxy '*' -H 'Host: other.test' `+target+`/mismatch -o /dev/null -w "mismatch=%{http_code}\n"`)
		expect(t, r, 0, "upstream saw https GET /captured host=tls.test:"+itoa(up.port), "mismatch=421", "!upstream saw https GET /mismatch")
	})
}

// TestCaptureControlFD: a list update on --control-fd applies to
// captured connections: refused before it, through after.
func TestCaptureControlFD(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(captureNameSettings([]string{"127.0.0.1:" + itoa(up.port)}, ""))
		script := resetFn + `curl -sS --noproxy '*' http://app.test:` + itoa(up.port) + `/before; echo "first=$(reset $?)"; while [ ! -e go ]; do sleep 0.05; done; curl -sS --noproxy '*' http://app.test:` + itoa(up.port) + `/after | head -1`
		got := w.runUpdated(captureNameSettings([]string{"app.test", "127.0.0.1:" + itoa(up.port)}, ""), "first=", "-s", s, "-c", script)
		if !strings.Contains(got, "first=reset") || !strings.Contains(got, "upstream saw GET /after host=app.test") || strings.Contains(got, "/before") {
			t.Fatalf("output:\n%s", got)
		}
	})
}

// TestCaptureCannotBeChanged: nothing inside can change the namespace's
// rules or routes, or take the ports of srt's sockets.
func TestCaptureCannotBeChanged(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(netSettings(nil, nil, ""),
			`printf '*nat\nCOMMIT\n' | /usr/sbin/iptables-restore 2>&1 | tail -1; echo "restore=${PIPESTATUS[1]}"; `+
				`/usr/sbin/ip route del default 2>&1; /usr/sbin/ip addr add 10.9.9.9/32 dev lo 2>&1; `+
				`python3 -c '
import socket
for fam, addr in ((socket.AF_INET, ("0.0.0.0", 3129)), (socket.AF_INET, ("127.0.0.1", 3129)), (socket.AF_INET6, ("::1", 3129)), (socket.AF_INET, ("127.0.0.53", 53)), (socket.AF_INET, ("127.0.0.1", 3128))):
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.bind(addr); s.listen(); print(addr, "bound")
    except OSError as e: print(addr, "errno", e.errno)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.bind(("127.0.0.53", 53)); print("dns bound")
except OSError as e: print("dns errno", e.errno)
'; /usr/sbin/ip route | head -1`)
		expect(t, r, 0, "restore=4", "Could not fetch rule set generation id: Permission denied", "RTNETLINK answers: Operation not permitted",
			"('0.0.0.0', 3129) errno 98", "('127.0.0.1', 3129) errno 98", "('::1', 3129) errno 98",
			"('127.0.0.53', 53) errno 13", "('127.0.0.1', 3128) errno 98", "dns errno 13",
			"default dev lo", "!bound")
	})
}
