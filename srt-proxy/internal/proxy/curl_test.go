package proxy

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/testcert"
)

// TestCurl drives the proxy with real curl: plain HTTP, HTTPS through
// CONNECT (a loopback TLS server whose certificate a throwaway CA signed),
// and socks5h.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	ca, err := testcert.New()
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s tls=%v", r.Method, r.URL.Path, r.TLS != nil)
	})
	plain := httptest.NewServer(handler)
	defer plain.Close()
	secure := httptest.NewUnstartedServer(handler)
	cfg, err := ca.Server("echo.test")
	if err != nil {
		t.Fatal(err)
	}
	secure.TLS = cfg
	secure.StartTLS()
	defer secure.Close()
	plainPort := plain.Listener.Addr().(*net.TCPAddr).Port
	securePort := secure.Listener.Addr().(*net.TCPAddr).Port

	a := &fakeAsker{answer: func(r *ask.Request) (ask.Verdict, error) {
		if r.Host == "echo.test" {
			return ask.Verdict{Allow: true}, nil
		}
		return ask.Verdict{Status: 403, Reason: "host is not on the allow list"}, nil
	}}
	addr, _ := startProxy(t, a, func(s *Server) {
		s.Token = testToken
		s.Dialer.Resolve = fakeResolve(map[string][]string{"echo.test": {"127.0.0.1"}})
		s.Dialer.Policy = exempt(t, fmt.Sprintf("127.0.0.1:%d", plainPort), fmt.Sprintf("127.0.0.1:%d", securePort))
	})
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(curl, append([]string{"-sS", "--max-time", "10"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	httpProxy := "http://srt.Y3VybA:" + testToken + "@" + addr
	socksProxy := "socks5h://srt.Y3VybA:" + testToken + "@" + addr

	if got := run("-x", httpProxy, fmt.Sprintf("http://echo.test:%d/plain", plainPort)); got != "GET /plain tls=false" {
		t.Errorf("http://: %q", got)
	}
	if got := run("-x", httpProxy, "--cacert", caFile, fmt.Sprintf("https://echo.test:%d/tls", securePort)); got != "GET /tls tls=true" {
		t.Errorf("https:// via CONNECT: %q", got)
	}
	if got := run("-x", socksProxy, "--cacert", caFile, fmt.Sprintf("https://echo.test:%d/socks", securePort)); got != "GET /socks tls=true" {
		t.Errorf("socks5h: %q", got)
	}
	if got := run("-x", socksProxy, fmt.Sprintf("http://echo.test:%d/socks-plain", plainPort)); got != "GET /socks-plain tls=false" {
		t.Errorf("socks5h plain: %q", got)
	}
	// Several requests on one proxy connection.
	u := fmt.Sprintf("http://echo.test:%d/k", plainPort)
	if got := run("-x", httpProxy, u, u, u); got != strings.Repeat("GET /k tls=false", 3) {
		t.Errorf("keep-alive: %q", got)
	}
	// Refusals as curl sees them.
	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-x", httpProxy, "http://denied.test/"); got != "403" {
		t.Errorf("denied http: %q", got)
	}
	if got := run("-o", "/dev/null", "-w", "%{http_code}", "-x", "http://"+addr, u); got != "407" {
		t.Errorf("no credentials: %q", got)
	}
	cmd := exec.Command(curl, "-sS", "--max-time", "10", "-x", httpProxy, "https://denied.test/")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "403") {
		t.Errorf("denied CONNECT: %q", out)
	}
	for _, r := range a.requests() {
		if r.User != "srt.Y3VybA" {
			t.Errorf("request without the user: %+v", r)
		}
	}
}
