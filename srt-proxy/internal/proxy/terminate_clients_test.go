package proxy

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Real clients through a terminated tunnel: each trusts the MITM CA the
// way the sandbox's trust variables make it (--cacert, SSL_CERT_FILE,
// GIT_SSL_CAINFO, -CAfile), and the upstream's own certificate comes from
// a test CA only the proxy trusts.

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}

// cleanEnv is a minimal environment for a client process.
func cleanEnv(t *testing.T, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C"}, extra...)
}

func TestTerminateCurl(t *testing.T) {
	curl := lookPath(t, "curl")
	f := newTLSFixture(t, fixtureOpts{answer: func(r *ask.Request) (ask.Verdict, error) {
		if r.Method == "POST" {
			return ask.Verdict{Status: 403, Reason: "uploads are not allowed"}, nil
		}
		return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-injected": {"by-the-decider"}}}, nil
	}})
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(curl, append([]string{"-sS", "--max-time", "10", "-x", f.proxyURL(), "--cacert", f.caFile}, args...)...)
		cmd.Env = cleanEnv(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	url := "https://" + f.target("echo.test") + "/curl?x=1"
	got := run(url)
	if !strings.HasPrefix(got, "GET /curl?x=1 host="+f.target("echo.test")) || !strings.Contains(got, "X-Injected: by-the-decider") {
		t.Errorf("GET: %q", got)
	}
	got = run("-i", "-d", "payload", url)
	if !strings.Contains(got, "HTTP/1.1 403 Forbidden") || !strings.Contains(got, "X-Proxy-Error: blocked-by-sandbox-runtime") ||
		!strings.HasSuffix(got, "\r\n\r\nuploads are not allowed\n") {
		t.Errorf("denied POST: %q", got)
	}
	// Two URLs in one curl run share the tunnel (keep-alive).
	got = run(url, url)
	if strings.Count(got, "GET /curl?x=1") != 2 {
		t.Errorf("two requests: %q", got)
	}
	if n := f.asker.requests(); countKind(n, ask.KindConnect) != 3 {
		t.Errorf("%d CONNECTs for three curl runs", countKind(n, ask.KindConnect))
	}
}

func countKind(rs []ask.Request, k ask.Kind) int {
	n := 0
	for _, r := range rs {
		if r.Kind == k {
			n++
		}
	}
	return n
}

func TestTerminatePython(t *testing.T) {
	python := lookPath(t, "python3")
	f := newTLSFixture(t, fixtureOpts{})
	script := `import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1], timeout=10)
sys.stdout.write("%d %s" % (r.status, r.read().decode()))
`
	cmd := exec.Command(python, "-c", script, "https://"+f.target("echo.test")+"/py")
	cmd.Env = cleanEnv(t, "https_proxy="+f.proxyURL(), "SSL_CERT_FILE="+f.caFile)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "200 GET /py ") {
		t.Errorf("python: %v\n%s", err, out)
	}
	asked := f.asker.requests()
	if len(asked) != 2 || asked[1].SNI != "echo.test" || asked[1].Headers["user-agent"] == nil {
		t.Errorf("asked %+v", asked)
	}
}

// TestTerminateGitClone clones over HTTPS (git's dumb HTTP protocol, a
// bare repository's files served as they are) through a terminated
// tunnel.
func TestTerminateGitClone(t *testing.T) {
	git := lookPath(t, "git")
	dir := t.TempDir()
	gitRun := func(wd string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = wd
		cmd.Env = cleanEnv(t, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	src := filepath.Join(dir, "src")
	gitRun(dir, "init", "-q", "-b", "main", src)
	os.WriteFile(filepath.Join(src, "README"), []byte("through the proxy\n"), 0o644)
	gitRun(src, "add", "README")
	gitRun(src, "commit", "-q", "-m", "first")
	gitRun(dir, "clone", "-q", "--bare", src, filepath.Join(dir, "srv", "repo.git"))
	gitRun(filepath.Join(dir, "srv", "repo.git"), "update-server-info")

	f := newTLSFixture(t, fixtureOpts{handler: http.FileServer(http.Dir(filepath.Join(dir, "srv")))})
	dst := filepath.Join(dir, "dst")
	// proxyAuthMethod=basic: git's default (any) first sends the CONNECT
	// without credentials and retries on the same connection after the
	// 407, which the proxy closes (a CONNECT refusal always does), so
	// libcurl gives up with "Proxy CONNECT aborted".
	cmd := exec.Command(git, "-c", "http.proxyAuthMethod=basic", "clone", "-q", "https://"+f.target("echo.test")+"/repo.git", dst)
	cmd.Env = cleanEnv(t, "GIT_CONFIG_NOSYSTEM=1", "https_proxy="+f.proxyURL(), "GIT_SSL_CAINFO="+f.caFile, "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "README")); err != nil || string(b) != "through the proxy\n" {
		t.Errorf("cloned README: %q, %v", b, err)
	}
	var paths []string
	for _, r := range f.asker.requests() {
		if r.Kind == ask.KindHTTP {
			paths = append(paths, r.Method+" "+r.Path+"?"+r.Query)
		}
	}
	if len(paths) == 0 || paths[0] != "GET /repo.git/info/refs?service=git-upload-pack" {
		t.Errorf("requests asked about: %q", paths)
	}
}

// TestTerminateOpenSSL shows the minted leaf with openssl s_client
// -proxy: subject CN and SAN are the SNI, the issuer the ephemeral CA,
// and the chain verifies against the MITM CA.
func TestTerminateOpenSSL(t *testing.T) {
	openssl := lookPath(t, "openssl")
	f := newTLSFixture(t, fixtureOpts{})
	cmd := exec.Command(openssl, "s_client", "-proxy", f.proxy, "-proxy_user", "srt", "-proxy_pass", "pass:"+testToken,
		"-connect", f.target("echo.test"), "-servername", "Echo.Test", "-CAfile", f.caFile, "-verify_return_error", "-showcerts")
	cmd.Env = cleanEnv(t)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("s_client: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"subject=CN = echo.test", "issuer=CN = sandbox-runtime ephemeral CA", "Verify return code: 0 (ok)", "New, TLSv1.3"} {
		if !strings.Contains(s, want) {
			t.Errorf("s_client output lacks %q:\n%s", want, s)
		}
	}
	leaf := regexp.MustCompile(`(?s)-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----`).FindString(s)
	x := exec.Command(openssl, "x509", "-noout", "-ext", "subjectAltName", "-dates")
	x.Stdin = strings.NewReader(leaf)
	san, err := x.CombinedOutput()
	if err != nil || !strings.Contains(string(san), "DNS:echo.test") {
		t.Errorf("SAN: %v\n%s", err, san)
	}
	t.Logf("minted leaf:\n%s", san)
}
