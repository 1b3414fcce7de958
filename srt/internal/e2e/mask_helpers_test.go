//go:build linux

package e2e

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The credential masking tests (issue 12, docs/credentials.md): real
// servers on loopback record what reaches them, so a test can say which
// value, sentinel or real, crossed the wire.

// seenRequest is one request as an upstream received it.
type seenRequest struct {
	scheme, host, method, target string
	header                       http.Header
	chunked                      bool
	body                         string
}

// maskUpstream is an HTTPS server (certificate for the names of
// maskHosts, from a test CA of its own) and a plain-HTTP one beside it,
// recording every request; handle (nil: 200 "ok") answers it.
type maskUpstream struct {
	ca              *testCA
	port, plainPort int
	handle          func(r *http.Request, body string) (int, string)
	mu              sync.Mutex
	seen            []seenRequest
}

// maskHosts is the private /etc/hosts of the masking tests: every name
// resolves to loopback, where the upstreams listen. (A request to
// localhost or 127.0.0.1 would go direct, as curl honours NO_PROXY for
// them, and reach the proxy as an opaque connection, never injected.)
const maskHosts = "127.0.0.1 localhost\n127.0.0.1 inject.test\n127.0.0.1 other.test\n127.0.0.1 s3.test\n127.0.0.1 others3.test\n"

func startMaskUpstream(t *testing.T, handle func(r *http.Request, body string) (int, string)) *maskUpstream {
	t.Helper()
	u := &maskUpstream{ca: newTestCA(t, "mask upstream test CA", false), handle: handle}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		host, _, _ := net.SplitHostPort(r.Host)
		u.mu.Lock()
		u.seen = append(u.seen, seenRequest{scheme: scheme, host: host, method: r.Method, target: r.URL.RequestURI(),
			header: r.Header.Clone(), chunked: len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked", body: string(b)})
		u.mu.Unlock()
		code, text := 200, "ok\n"
		if u.handle != nil {
			code, text = u.handle(r, string(b))
		}
		w.WriteHeader(code)
		io.WriteString(w, text)
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
	names := []string{"inject.test", "other.test", "s3.test", "others3.test"}
	u.port = serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{u.ca.serverCert(t, names...)}}))
	if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	u.plainPort = serve(ln)
	return u
}

// request is the one request the upstream received at path (the target
// without its query); the test fails unless there is exactly one.
func (u *maskUpstream) request(t *testing.T, path string) seenRequest {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	var found []seenRequest
	for _, s := range u.seen {
		if p, _, _ := strings.Cut(s.target, "?"); p == path {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the upstream received %d requests for %s, want 1; it received %v", len(found), path, u.seen)
	}
	return found[0]
}

// all is everything the upstream received, as text, for checks that a
// value never reached it.
func (u *maskUpstream) all() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var b strings.Builder
	for _, s := range u.seen {
		b.WriteString(s.method + " " + s.target + "\n")
		for n, vs := range s.header {
			b.WriteString(n + ": " + strings.Join(vs, ", ") + "\n")
		}
		b.WriteString(s.body + "\n")
	}
	return b.String()
}

func (u *maskUpstream) https(name string) string { return "https://" + name + ":" + itoa(u.port) }
func (u *maskUpstream) http(name string) string  { return "http://" + name + ":" + itoa(u.plainPort) }

// maskSettings is a settings file allowing the masking tests' names on
// both upstreams (the address literals let names that resolve to loopback
// through), terminating TLS with the upstream's CA trusted, with
// credentials as the credentials block.
func (u *maskUpstream) maskSettings(w *workspace, credentials string) string {
	ca := w.write("mask-upstream-ca.pem", string(u.ca.certPEM))
	allowed := []string{"inject.test", "other.test", "s3.test", "others3.test", "127.0.0.1:" + itoa(u.port), "127.0.0.1:" + itoa(u.plainPort)}
	s := netSettings(allowed, nil, `,"tlsTerminate":{"extraCaCertPaths":["`+ca+`"]}`)
	return w.settings(strings.TrimSuffix(s, "}") + `,"credentials":` + credentials + `}`)
}

// field is the value of "name=" on its own line of out ("" if absent).
func field(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			return v
		}
	}
	return ""
}
