//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/internal/seatbelt"
	"github.com/srt-sandbox/srt/settings"
)

// testCompanions is the directory of the decider and srt-proxy this
// package's tests built (TestMain, agenthost_test.go).
var testCompanions string

// SetTestCompanions is TestMain's way to tell this package's own tests
// where the companions are (a test-only export).
func SetTestCompanions(dir string) { testCompanions = dir }

// TestHostEgress: the egress macOS runs for a command (startHostEgress,
// macOSProxy, the seatbelt profile's environment), here on Linux with the
// real decider and srt-proxy and real curl on the host, no sandbox: a
// request to the allowed server through the proxy variables passes, over
// HTTP and SOCKS; one to a denied port is refused and recorded as the
// command's violation; the proxy wants the command's credentials; the
// token is in the environment only; Close leaves nothing listening.
func TestHostEgress(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed:", err)
	}
	serve := func(body string) int {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(s.Close)
		return s.Listener.Addr().(*net.TCPAddr).Port
	}
	allowed, denied := serve("allowed"), serve("denied")
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":["localhost:` + strconv.Itoa(allowed) + `"],"deniedDomains":[]},` +
		`"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	const command = "curl the servers"
	var store ViolationStore
	var warnings strings.Builder
	he, p := startHostEgressForTest(t, cfg, command, &store, &warnings)
	closed := false
	defer func() {
		if !closed {
			he.Close()
		}
	}()
	token := he.proxy.Token
	if len(token) != 32 {
		t.Fatalf("token %q", token)
	}
	if strings.Contains(p.SBPL, token) || strings.Contains(strings.Join(p.Argv, " "), token) {
		t.Fatal("the proxy token is in the profile or sandbox-exec's argv")
	}
	// The profile lets the command reach exactly the two ports.
	for _, port := range []int{he.ports.http, he.ports.socks} {
		if !strings.Contains(p.SBPL, fmt.Sprintf(`(remote ip "localhost:%d")`, port)) {
			t.Errorf("the profile does not allow localhost:%d:\n%s", port, p.SBPL)
		}
	}
	get := func(proxyVar, url string, extra ...string) string {
		t.Helper()
		return curlThrough(t, curl, p, proxyVar, url, extra...)
	}
	url := func(port int) string { return "http://localhost:" + strconv.Itoa(port) + "/" }
	// curl reads http_proxy itself.
	if got := get("", url(allowed)); got != "200" {
		t.Errorf("allowed server through http_proxy: %q, want 200 (warnings: %s)", got, warnings.String())
	}
	if got := get("FTP_PROXY", url(allowed)); got != "200" {
		t.Errorf("allowed server through the SOCKS proxy: %q, want 200", got)
	}
	if got := get("", url(denied)); got != "403" {
		t.Errorf("denied server through http_proxy: %q, want 403", got)
	}
	// Another program on the host reaches the port, not the proxy: it
	// has no credentials.
	if got := get("", url(allowed), "-x", "http://localhost:"+strconv.Itoa(he.ports.http)); got != "407" {
		t.Errorf("without the credentials: %q, want 407", got)
	}
	he.Close()
	closed = true
	var lines []string
	for _, v := range store.ForKey(command) {
		lines = append(lines, v.Line)
		if v.Command != command {
			t.Errorf("violation %q attributed to %q", v.Line, v.Command)
		}
	}
	want := "localhost:" + strconv.Itoa(denied)
	found := false
	for _, l := range lines {
		found = found || strings.Contains(l, want)
		if strings.Contains(l, "localhost:"+strconv.Itoa(allowed)) {
			t.Errorf("the allowed request was recorded as a violation: %q", l)
		}
	}
	if !found {
		t.Errorf("no violation for %s; recorded: %q", want, lines)
	}
	// Closed: nothing listens on the ports any more.
	for _, port := range []int{he.ports.http, he.ports.socks} {
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still accepts after Close", port)
		}
	}
}

// startHostEgressForTest starts macOS's egress for command under cfg,
// with the companions this package's tests built, and makes its Seatbelt
// profile: its Env is the command's environment.
func startHostEgressForTest(t *testing.T, cfg *settings.Config, command string, store *ViolationStore, warnings io.Writer) (*hostEgress, *seatbelt.Profile) {
	t.Helper()
	he, err := startHostEgress(hostEgressOptions{Config: cfg, Key: command, Text: command,
		DeciderExecutable: filepath.Join(testCompanions, "decider"), ProxyExecutable: filepath.Join(testCompanions, "srt-proxy"),
		Warnings: warnings, Violations: store})
	if err != nil {
		t.Fatal(err)
	}
	env := seatbelt.Env{Command: command, Cwd: t.TempDir(), Home: t.TempDir(), TmpDir: t.TempDir(), Nonce: "n",
		Environ: []string{"PATH=" + os.Getenv("PATH")}}
	macOSProxy(&env, &cfg.Network, he)
	in, err := seatbelt.FromSettings(cfg, env)
	if err != nil {
		he.Close()
		t.Fatal(err)
	}
	p, err := seatbelt.Generate(in)
	if err != nil {
		he.Close()
		t.Fatal(err)
	}
	return he, p
}

// curlThrough runs curl on the host with the command's environment (p.Env)
// and returns the HTTP status: through http_proxy, or through the proxy
// the variable proxyVar names.
func curlThrough(t *testing.T, curl string, p *seatbelt.Profile, proxyVar, url string, extra ...string) string {
	t.Helper()
	args := append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--noproxy", ""}, extra...)
	if proxyVar != "" {
		v := ""
		for _, kv := range p.Env {
			if val, ok := strings.CutPrefix(kv, proxyVar+"="); ok {
				v = val
			}
		}
		if v == "" {
			t.Fatalf("no %s in the command's environment", proxyVar)
		}
		args = append(args, "-x", v)
	}
	cmd := exec.Command(curl, append(args, url)...)
	cmd.Env = p.Env
	out, _ := cmd.Output()
	return string(out)
}

// recordingProxy serves ln until the test ends: it sends each request's
// method and target to the channel it returns, and answers answer.
func recordingProxy(t *testing.T, ln net.Listener, answer string) <-chan string {
	t.Cleanup(func() { ln.Close() })
	seen := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				seen <- req.Method + " " + req.RequestURI
				c.Write([]byte(answer))
			}
			c.Close()
		}
	}()
	return seen
}

// drain is what the channel holds now.
func drain(seen <-chan string) []string {
	var got []string
	for len(seen) > 0 {
		got = append(got, <-seen)
	}
	return got
}

// onlyAllowedThrough requests http://x.test/page (allowed: want is the
// status via answers) and http://other.test/page (denied: 403) through
// macOS's egress under cfg, and checks that via saw only the first.
func onlyAllowedThrough(t *testing.T, curl string, cfg *settings.Config, seen <-chan string, want, via string) {
	t.Helper()
	var store ViolationStore
	he, p := startHostEgressForTest(t, cfg, "curl through "+via, &store, io.Discard)
	defer he.Close()
	if got := curlThrough(t, curl, p, "", "http://x.test/page"); got != want {
		t.Errorf("allowed request: %q, want %s's %s", got, via, want)
	}
	if got := curlThrough(t, curl, p, "", "http://other.test/page"); got != "403" {
		t.Errorf("denied request: %q, want 403", got)
	}
	if got := drain(seen); len(got) != 1 || got[0] != "GET http://x.test/page" {
		t.Errorf("%s saw %q, want only the allowed request", via, got)
	}
}

// TestHostEgressParentProxy: on macOS too srt-proxy chains through
// network.parentProxy on the host: an allowed request reaches the parent
// (here a loopback proxy that answers 502), a denied one does not.
func TestHostEgressParentProxy(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed:", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := recordingProxy(t, ln, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":["x.test"],"deniedDomains":[],"parentProxy":{"http":"http://` + ln.Addr().String() + `"}},` +
		`"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := MacOSUnsupported(cfg); err != nil {
		t.Fatalf("refused on macOS: %v", err)
	}
	onlyAllowedThrough(t, curl, cfg, seen, "502", "the parent proxy")
}

// TestHostEgressMITMProxy: on macOS too srt-proxy sends the requests of
// network.mitmProxy's domains to the user's MITM proxy on its Unix socket
// (here one that records the request line and answers 200 itself); a
// refused host does not reach it; a socketPath that is no socket is a
// settings error before the command runs.
func TestHostEgressMITMProxy(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed:", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "mitm.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	seen := recordingProxy(t, ln, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmitm")
	parse := func(socketPath string) *settings.Config {
		cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":["x.test"],"deniedDomains":[],"mitmProxy":{"socketPath":"` + socketPath + `","domains":["x.test"]}},` +
			`"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := MacOSUnsupported(cfg); err != nil {
			t.Fatalf("refused on macOS: %v", err)
		}
		return cfg
	}
	onlyAllowedThrough(t, curl, parse(sock), seen, "200", "the MITM proxy")

	notSocket := filepath.Join(dir, "file")
	os.WriteFile(notSocket, nil, 0o600)
	_, err = startHostEgress(hostEgressOptions{Config: parse(notSocket), Key: "c", Text: "c",
		DeciderExecutable: filepath.Join(testCompanions, "decider"), ProxyExecutable: filepath.Join(testCompanions, "srt-proxy"),
		Warnings: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "network.mitmProxy.socketPath: ") || !errors.Is(err, settings.ErrInvalid) {
		t.Errorf("a socketPath that is a file: %v; want a settings error naming network.mitmProxy", err)
	}
}

// TestMacOSProxyPorts: with one proxy port of the user's, macOS's command
// reaches that port directly, without srt's credentials, and srt's own
// proxy on the other; with none, both are srt's and carry them.
func TestMacOSProxyPorts(t *testing.T) {
	hp := &hostProxy{ports: proxyPorts{41001, 41002}}
	hp.proxy = &plan.Proxy{HTTPPort: 41001, SOCKSPort: 41002, User: srtlink.UserFor("c"), Token: "0123456789abcdef0123456789abcdef"}
	he := &hostEgress{hostProxy: hp}
	vars := func(n settings.Network) map[string]string {
		t.Helper()
		cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":["x.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Network.HTTPProxyPort, cfg.Network.SOCKSProxyPort = n.HTTPProxyPort, n.SOCKSProxyPort
		env := seatbelt.Env{Command: "c", Cwd: "/w", Home: "/h", Nonce: "n", FS: fsview.OS{}}
		macOSProxy(&env, &cfg.Network, he)
		in, err := seatbelt.FromSettings(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		p, err := seatbelt.Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, kv := range p.Env {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		return out
	}
	// The user of key "c" is srt.Yw==, its '=' escaped in a URL.
	creds := url.QueryEscape(hp.proxy.User) + ":" + hp.proxy.Token + "@"
	for _, c := range []struct {
		n           settings.Network
		http, socks string
	}{
		{settings.Network{}, "http://" + creds + "localhost:41001", "socks5h://" + creds + "localhost:41002"},
		{settings.Network{HTTPProxyPort: 8080}, "http://localhost:8080", "socks5h://" + creds + "localhost:41002"},
		{settings.Network{SOCKSProxyPort: 1081}, "http://" + creds + "localhost:41001", "socks5h://localhost:1081"},
	} {
		v := vars(c.n)
		if v["HTTP_PROXY"] != c.http || v["FTP_PROXY"] != c.socks {
			t.Errorf("httpProxyPort %d, socksProxyPort %d: HTTP_PROXY %q, FTP_PROXY %q; want %q, %q",
				c.n.HTTPProxyPort, c.n.SOCKSProxyPort, v["HTTP_PROXY"], v["FTP_PROXY"], c.http, c.socks)
		}
	}
}
