package dial

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// unixMITM is a MITM proxy on a Unix socket (net/http's server): it
// records each request line; a CONNECT it answers with status and then,
// on a 200, relays to relayTo; any other request it answers itself, "mitm
// saw <request-target>".
type unixMITM struct {
	path    string
	status  int
	relayTo string
	mu      sync.Mutex
	seen    []string
}

func startUnixMITM(t *testing.T, status int, relayTo string) *unixMITM {
	t.Helper()
	m := &unixMITM{path: filepath.Join(t.TempDir(), "mitm.sock"), status: status, relayTo: relayTo}
	ln, err := net.Listen("unix", m.path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *unixMITM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.seen = append(m.seen, r.Method+" "+r.RequestURI+" "+r.Proto)
	m.mu.Unlock()
	if r.Method != http.MethodConnect {
		io.WriteString(w, "mitm saw "+r.RequestURI)
		return
	}
	if m.status != http.StatusOK {
		w.WriteHeader(m.status)
		return
	}
	c, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	up, err := net.Dial("tcp", m.relayTo)
	if err != nil {
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
	go func() { io.Copy(up, brw); up.(*net.TCPConn).CloseWrite() }()
	io.Copy(c, up)
}

func (m *unixMITM) lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// takesOnly is a MITMProxy.Takes for one host.
func takesOnly(host string) func(string) bool { return func(h string) bool { return h == host } }

// noResolve fails the test when a name is resolved.
func noResolve(t *testing.T) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(_ context.Context, _, host string) ([]netip.Addr, error) {
		t.Errorf("%s was resolved: a MITM-proxied host is the MITM proxy's to resolve", host)
		return nil, errors.New("no")
	}
}

func echoRoundTrip(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "ping\n" {
		t.Fatalf("through the tunnel: %q, %v", got, err)
	}
}

// TestMITMTunnel: a host the MITM proxy takes is reached by its CONNECT
// over the Unix socket, unresolved, before the parent proxy; another
// host is not.
func TestMITMTunnel(t *testing.T) {
	echo := listen(t)
	m := startUnixMITM(t, http.StatusOK, echo.Addr().String())
	rec := &recorder{to: echo.Addr().String()}
	d := &Dialer{
		Resolve: noResolve(t), Dial: rec.dial,
		Parent: &ParentProxy{HTTPS: &url.URL{Scheme: "http", Host: "parent.test:3128"}},
		MITM:   &MITMProxy{Socket: m.path, Takes: takesOnly("api.example.com")},
	}
	c, dialed, err := d.Tunnel(context.Background(), "api.example.com", 443)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echoRoundTrip(t, c)
	if got := m.lines(); len(got) != 1 || got[0] != "CONNECT api.example.com:443 HTTP/1.1" {
		t.Errorf("the MITM proxy saw %q", got)
	}
	if dialed.Addr != m.path || dialed.Parent == nil || dialed.Parent.Scheme != "unix" || dialed.Parent.Path != m.path {
		t.Errorf("Dialed = %+v", dialed)
	}
	if got := rec.list(); len(got) != 0 {
		t.Errorf("the MITM-proxied tunnel also dialled %q", got)
	}
	// A host the MITM proxy does not take goes the usual way: to the
	// parent (the recorder's address).
	c2, _, err := d.Tunnel(context.Background(), "other.example.com", 443)
	if err == nil {
		c2.Close()
	}
	if got := rec.list(); len(got) != 1 || got[0] != "parent.test:3128" {
		t.Errorf("a host the MITM proxy does not take dialled %q; want the parent", got)
	}
	if len(m.lines()) != 1 {
		t.Errorf("the MITM proxy saw %q", m.lines())
	}
}

// TestMITMHTTP: a plain-HTTP destination the MITM proxy takes is a
// connection to its socket; requests go to it in absolute form
// (Dialed.Parent), without credentials.
func TestMITMHTTP(t *testing.T) {
	m := startUnixMITM(t, http.StatusOK, "")
	d := &Dialer{Resolve: noResolve(t), MITM: &MITMProxy{Socket: m.path, Takes: takesOnly("api.example.com")}}
	c, dialed, err := d.HTTP(context.Background(), "http", "api.example.com", 8080, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if dialed.Parent == nil || ProxyAuthorization(dialed.Parent) != "" {
		t.Fatalf("Dialed = %+v: requests must go in absolute form, without credentials", dialed)
	}
	io.WriteString(c, "GET http://api.example.com:8080/x HTTP/1.1\r\nHost: api.example.com:8080\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "mitm saw http://api.example.com:8080/x" {
		t.Errorf("body %q", body)
	}
	if got := m.lines(); len(got) != 1 || got[0] != "GET http://api.example.com:8080/x HTTP/1.1" {
		t.Errorf("the MITM proxy saw %q", got)
	}
}

// TestMITMFailures: the MITM proxy's refusal, and a socket nothing
// listens on or that is not there, are *UnreachableErrors naming the
// socket, with the proxy's answer or the system's word.
func TestMITMFailures(t *testing.T) {
	refusing := startUnixMITM(t, http.StatusForbidden, "")
	dead := filepath.Join(t.TempDir(), "dead.sock")
	ln, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	missing := filepath.Join(t.TempDir(), "missing.sock")
	for _, c := range []struct {
		socket  string
		failure Failure
		detail  string
	}{
		{refusing.path, Unreachable, `refused CONNECT: "HTTP/1.1 403 Forbidden"`},
		{dead, ConnectionRefused, ""},
		{missing, Unreachable, "connect: no such file or directory"},
	} {
		d := &Dialer{Resolve: noResolve(t), MITM: &MITMProxy{Socket: c.socket, Takes: takesOnly("a.example.com")}}
		for _, open := range []func() error{
			func() error { _, _, err := d.Tunnel(context.Background(), "a.example.com", 443); return err },
			func() error { _, _, err := d.HTTP(context.Background(), "http", "a.example.com", 80, nil); return err },
		} {
			err := open()
			var u *UnreachableError
			if !errors.As(err, &u) {
				if c.socket == refusing.path && err == nil {
					continue // plain HTTP sends no CONNECT: the refusing proxy accepted the connection
				}
				t.Fatalf("%s: %v is no *UnreachableError", c.socket, err)
			}
			if u.MITM != c.socket || u.Failure() != c.failure || u.Detail() != c.detail || !strings.Contains(u.Error(), c.socket) {
				t.Errorf("%s: MITM %q, Failure %v, Detail %q, Error %q", c.socket, u.MITM, u.Failure(), u.Detail(), u.Error())
			}
		}
	}
}

// TestCheckSocket: at start, a socket or a missing path passes; anything
// else at the path is refused, naming it.
func TestCheckSocket(t *testing.T) {
	m := startUnixMITM(t, http.StatusOK, "")
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for path, want := range map[string]string{
		m.path:                        "",
		filepath.Join(dir, "missing"): "",
		file:                          file + " is not a Unix socket (it is a regular file); give the socket the MITM proxy listens on",
		dir:                           dir + " is not a Unix socket (it is a directory); give the socket the MITM proxy listens on",
	} {
		err := CheckSocket(path)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("CheckSocket(%s) = %q; want %q", path, got, want)
			}
		} else if want != "" {
			t.Errorf("CheckSocket(%s) = nil; want %q", path, want)
		}
	}
}
