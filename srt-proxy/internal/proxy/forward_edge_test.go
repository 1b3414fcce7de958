package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
)

// TestStreamedChunkedBody: a chunked request body the client sends
// piece by piece (an upload from a pipe, a full-duplex stream) reaches the
// upstream as it comes, as net/http's Transport did (it flushes after
// every chunk, golang.org/issue/6574). Here the upstream answers once it
// has the first chunk, and the client waits for that answer before
// sending the rest: if the proxy holds the head and the first chunk in its
// buffer, neither side can make progress.
func TestStreamedChunkedBody(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		first := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, first); err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n%s", first)
		io.Copy(io.Discard, r.Body)
	}()
	addr, _ := startProxy(t, &fakeAsker{}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	up := l.Addr().String()
	fmt.Fprintf(c, "POST http://%s/ HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", up, up)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body streams: %v (the upstream never saw the first chunk)", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello" {
		t.Errorf("answer %q", b)
	}
	io.WriteString(c, "0\r\n\r\n")
}

// TestReasonPhraseControlBytes: an upstream's reason phrase is
// relayed to the client as spelled, control bytes included: a bare CR
// there makes a lenient client read a header line the proxy never
// checked, so Rules.StripResponseHeaders can be got round.
func TestReasonPhraseControlBytes(t *testing.T) {
	up, _, _ := rawUpstream(t, func(c net.Conn, _, _ int, r *http.Request) bool {
		io.WriteString(c, "HTTP/1.1 200 OK\rSet-Cookie: stolen=1\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) {
		s.Rules.StripResponseHeaders = []string{"Set-Cookie"}
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", up, up)
	head := readResponseHead(t, bufio.NewReader(c))
	if strings.Contains(strings.ReplaceAll(head, "\r\n", ""), "\r") || strings.Contains(head, "Set-Cookie") {
		t.Errorf("response head relayed with a bare CR:\n%q", head)
	}
}

// TestHTTPSViaParentOriginForm: an absolute-form https:// request
// goes through the parent proxy's CONNECT and then TLS to the origin; what
// is sent inside that TLS goes to the origin, so it is in origin form and
// carries no Proxy-Authorization. The parent's credentials must never
// reach the origin (net/http's Transport, used before, sent origin form).
//
// The origin's certificate must be trusted through the system roots, so
// the proxy runs in a child process started with SSL_CERT_FILE.
func TestHTTPSViaParentOriginForm(t *testing.T) {
	if parent := os.Getenv("SRT_TEST_HTTPS_PARENT"); parent != "" {
		httpsViaParentChild(t, parent)
		return
	}
	origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s|%s", r.RequestURI, r.Header.Get("Proxy-Authorization"))
	}))
	origin.StartTLS()
	defer origin.Close()
	certFile := filepath.Join(t.TempDir(), "origin.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: origin.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// A CONNECT-only parent proxy that sends every tunnel to the origin.
	pl := connectParent(t, origin.Listener.Addr().String(), nil)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPSViaParentOriginForm$", "-test.v")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+certFile, "SSL_CERT_DIR="+t.TempDir(), "SRT_TEST_HTTPS_PARENT="+pl.Addr().String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("child: %v\n%s", err, out)
	}
}

func httpsViaParentChild(t *testing.T, parent string) {
	pu, _ := url.Parse("http://corp:secret@" + parent)
	addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) {
		s.Dialer.Parent = &dial.ParentProxy{HTTP: pu, HTTPS: pu}
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET https://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "/x|" {
		t.Errorf("the origin saw request-target|Proxy-Authorization = %q (status %d), want \"/x|\"", b, resp.StatusCode)
	}
}

// TestKeptConnectionToHTTPSParentChecked: a kept connection to an
// https:// parent proxy that the parent has closed (close_notify and FIN)
// is not used again: the next request, a POST (never resent), goes on a
// new connection. alive looks at the TCP socket under the TLS; for a
// parent reached over TLS it was handed the TLS connection itself, which
// socketQuiet cannot look into, so every such connection counted as alive.
func TestKeptConnectionToHTTPSParentChecked(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	defer srv.Close()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	serveEach(t, tls.NewListener(tl, srv.TLS), func(c net.Conn) {
		n := conns.Add(1) // the second connection opens after the first closed
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			answerMethodPath(c, r)
			if n == 1 {
				time.Sleep(50 * time.Millisecond)
				return // closes after its first answer
			}
		}
	})
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	pu, _ := url.Parse("https://" + tl.Addr().String())
	addr, _ := startProxy(t, &fakeAsker{}, func(s *Server) {
		s.Dialer.Parent = &dial.ParentProxy{HTTP: pu, TLSConfig: &tls.Config{RootCAs: roots}}
	})
	send := proxyClient(t, addr)
	if got := send("GET", "http://x.test/one"); got != "200 GET /one" {
		t.Fatalf("first: %q", got)
	}
	time.Sleep(200 * time.Millisecond) // the close_notify and the FIN arrive
	if got := send("POST", "http://x.test/two"); got != "200 POST /two" {
		t.Errorf("second: %q, want the answer to the POST on a new connection", got)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections to the parent, want 2", n)
	}
}
