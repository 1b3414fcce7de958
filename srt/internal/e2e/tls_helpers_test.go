//go:build linux

package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// newTestCA makes a CA named cn, with an RSA-2048 key (the reference's
// kind) or an ECDSA P-256 one.
func newTestCA(t *testing.T, cn string, useRSA bool) *testCA {
	t.Helper()
	var key crypto.Signer
	var err error
	if useRSA {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})}
}

// serverCert is a leaf for the given names (DNS names or IP addresses).
func (ca *testCA) serverCert(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsUpstream is a loopback HTTPS server (tls.test and pinned.test, its
// certificate from a CA of its own) and a plain-HTTP one beside it. Both
// answer with what they received and two response headers, X-Secret and
// X-Kept; the HTTPS one also serves a git repository over git's dumb HTTP
// protocol at /repo.git.
type tlsUpstream struct {
	ca                *testCA
	port, plainPort   int
	repoFile, repoDir string
}

// upstreamHosts is the private /etc/hosts of the TLS tests.
const upstreamHosts = "127.0.0.1 localhost\n127.0.0.1 tls.test\n127.0.0.1 pinned.test\n"

func startTLSUpstream(t *testing.T) *tlsUpstream {
	t.Helper()
	u := &tlsUpstream{ca: newTestCA(t, "upstream test CA", false)}
	u.repoDir = gitRepo(t)
	repo := http.StripPrefix("/repo.git/", http.FileServer(http.Dir(u.repoDir)))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/repo.git/") {
			repo.ServeHTTP(w, r)
			return
		}
		w.Header().Set("X-Secret", "s3")
		w.Header().Set("X-Kept", "yes")
		var names []string
		for n := range r.Header {
			names = append(names, n)
		}
		sort.Strings(names)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		fmt.Fprintf(w, "upstream saw %s %s %s host=%s\n", scheme, r.Method, r.URL.RequestURI(), r.Host)
		for _, n := range names {
			fmt.Fprintf(w, "header %s: %s\n", strings.ToLower(n), strings.Join(r.Header[n], ", "))
		}
	})
	serve := func(ln net.Listener) int {
		srv := &http.Server{Handler: handler}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().(*net.TCPAddr).Port
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.port = serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{u.ca.serverCert(t, "tls.test", "pinned.test", "127.0.0.1")}}))
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.plainPort = serve(ln)
	return u
}

// gitRepo makes a bare repository with one commit (README: "hello from
// git"), ready for git's dumb HTTP protocol.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	work := filepath.Join(dir, "work")
	git("init", "-q", "-b", "main", work)
	os.WriteFile(filepath.Join(work, "README"), []byte("hello from git\n"), 0o644)
	git("-C", work, "add", "README")
	git("-C", work, "commit", "-q", "-m", "first")
	bare := filepath.Join(dir, "repo.git")
	git("clone", "-q", "--bare", work, bare)
	git("-C", bare, "update-server-info")
	return bare
}

// hostPort is name:port of the HTTPS upstream, or of the plain one.
func (u *tlsUpstream) https(name string) string { return name + ":" + itoa(u.port) }
func (u *tlsUpstream) http(name string) string  { return name + ":" + itoa(u.plainPort) }

// allowed are the allowedDomains entries that let the sandbox reach both
// servers by name (the literals exempt them from the loopback refusal).
func (u *tlsUpstream) allowed() []string {
	return []string{"tls.test", "pinned.test", "127.0.0.1:" + itoa(u.port), "127.0.0.1:" + itoa(u.plainPort)}
}

// caFile writes the upstream's CA into the workspace (readable by the
// runner, so srt-proxy can read it) and returns its path.
func (u *tlsUpstream) caFile(w *workspace) string {
	return w.write("upstream-ca.pem", string(u.ca.certPEM))
}

// tlsSettings is a settings file allowing both upstreams, with
// tlsTerminate's object and further network keys.
func (u *tlsUpstream) tlsSettings(w *workspace, tlsTerminate, extra string) string {
	if tlsTerminate != "" {
		extra = `,"tlsTerminate":` + tlsTerminate + extra
	}
	return w.settings(netSettings(u.allowed(), []string{"denied.test"}, extra))
}

// proxyAuthPy is Python that sets "auth" to the Proxy-Authorization value
// of the sandbox's proxy credentials and "connect(target)" to a socket
// through the HTTP proxy after its CONNECT, with the answer's head.
const proxyAuthPy = `
import base64, os, socket, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = "Basic " + base64.b64encode((urllib.parse.unquote(u.username) + ":" + u.password).encode()).decode()
def connect(target):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n" % (target, target, auth)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    return s, head.decode()
def rest(s):
    out = b""
    while True:
        b = s.recv(4096)
        if not b:
            return out.decode()
        out += b
`

// py runs a Python program in the sandbox (quoted for bash -c).
func py(program string) string {
	return "python3 -c '" + strings.ReplaceAll(proxyAuthPy+program, "'", `'"'"'`) + "'"
}
