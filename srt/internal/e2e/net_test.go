//go:build linux

package e2e

import (
	"strings"
	"testing"
)

// curlCode prints only the status code (000 when there was none).
const curlCode = `curl -s -o /dev/null -w "%{http_code}\n" --noproxy "" `

func TestNetworkAllowAndDeny(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{up.addr(), "*.example.org"}, []string{"denied.test"}, `,"deniedDomainReasons":{"denied.test":"use mirror.test — or café"}`))
		r := w.srt("-s", s, "-c",
			curlCode+"http://"+up.addr()+"/ok; "+ // allowed literal with its port
				curlCode+"http://127.0.0.1:1/; "+ // same host, another port: refused
				curlCode+"http://a.example.org/; "+ // wildcard admits a subdomain (no DNS here: 502)
				curlCode+"http://example.org/; "+ // and refuses the apex
				curlCode+"-x \"$FTP_PROXY\" http://"+up.addr()+"/socks") // SOCKS5h with credentials
		expect(t, r, 0)
		if r.stdout != "200\n403\n502\n403\n200\n" {
			t.Fatalf("status codes: %s", r)
		}
		// The plain-HTTP refusal, byte for byte.
		r = w.srt("-s", s, "-c", `curl -si --noproxy "" http://other.test/`)
		expect(t, r, 0, "HTTP/1.1 403 Forbidden\r\n", "Content-Type: text/plain\r\n", "X-Proxy-Error: blocked-by-allowlist\r\n", "\r\n\r\nConnection blocked by network allowlist\n")
		// A CONNECT refusal carries the reason as its status phrase,
		// non-ASCII replaced by "?".
		r = w.srt("-s", s, "-c", `curl -sv https://denied.test/ 2>&1 | grep '< HTTP'; curl -sv https://other.test/ 2>&1 | grep '< HTTP'`)
		expect(t, r, 0, "< HTTP/1.1 403 use mirror.test ? or caf?", "< HTTP/1.1 403 host is not on the allow list")
	})
}

func TestProxyRequiresCredentials(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{up.addr()}, nil, ""))
		// The proxies' ports from the variables srt sets: 3128 and 1080
		// under bubblewrap, chosen per run under the Landlock backend.
		r := w.srt("-s", s, "-c", curlCode+"--proxy http://localhost:$CLOUDSDK_PROXY_PORT http://"+up.addr()+"/; curl -si --noproxy '' --proxy http://localhost:$CLOUDSDK_PROXY_PORT http://"+up.addr()+"/ | grep -i '^proxy-authenticate'; "+
			curlCode+"--proxy http://srt:wrong-token@localhost:$CLOUDSDK_PROXY_PORT http://"+up.addr()+"/; "+
			curlCode+"-x socks5h://$RSYNC_PROXY http://"+up.addr()+"/; echo socks-exit=$?")
		// curl 97: the SOCKS5 proxy accepted no method curl offered.
		expect(t, r, 0, "407\n", `Proxy-Authenticate: Basic realm="srt"`, "socks-exit=97")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 5 || lines[2] != "407" || lines[3] != "000" {
			t.Fatalf("credentials not enforced: %s", r)
		}
	})
}

func TestProxyVariables(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh(netSettings(nil, nil, ""), "env | sort")
		expect(t, r, 0,
			"SANDBOX_RUNTIME=1\n",
			"NO_PROXY=localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16\n",
			"HTTP_PROXY=http://srt.", "@localhost:3128\n", "ALL_PROXY=http://srt.",
			"FTP_PROXY=socks5h://srt.", "@localhost:1080\n", "RSYNC_PROXY=localhost:1080\n",
			"GIT_CONFIG_PARAMETERS='http.proxyAuthMethod=basic'\n",
			"GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='", "--srt-connect=v1 %h %p'\n",
			"CLOUDSDK_PROXY_TYPE=http\n", "CLOUDSDK_PROXY_PORT=3128\n",
			"!CLAUDE")
	})
}

// TestOnlyLoopbackInside: the sandbox's network namespace has only lo
// (programs that ignore the proxy variables are captured: capture_test.go).
func TestOnlyLoopbackInside(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.sh(netSettings(nil, nil, ""), "cat /proc/net/dev"), 0, "lo:", "!eth")
	})
}

func TestPythonThroughTheProxy(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		hosts := "127.0.0.1 localhost\n127.0.0.1 app.test\n"
		s := w.settings(netSettings([]string{"app.test", "127.0.0.1:" + itoa(up.port)}, nil, ""))
		script := `python3 -c 'import urllib.request; print(urllib.request.urlopen("http://app.test:` + itoa(up.port) + `/py").read().decode().splitlines()[0])'`
		r := w.withHosts(hosts, "-s", s, "-c", script)
		expect(t, r, 0, "upstream saw GET /py host=app.test:"+itoa(up.port))
	})
}

func TestNameResolvingToLoopbackIsRefused(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		hosts := "127.0.0.1 localhost\n127.0.0.1 myapp.test\n"
		// Allowed by name, but it resolves to loopback: refused after the
		// lookup, with the sandbox-runtime tag.
		s := w.settings(netSettings([]string{"myapp.test"}, nil, ""))
		r := w.withHosts(hosts, "-s", s, "-c", "curl -si --noproxy '' http://myapp.test:"+itoa(up.port)+"/")
		expect(t, r, 0, "HTTP/1.1 403", "X-Proxy-Error: blocked-by-sandbox-runtime", "Connection to myapp.test blocked: resolved to a loopback address")
		// The literal entry for that address and port admits it.
		s2 := w.settings(netSettings([]string{"myapp.test", "127.0.0.1:" + itoa(up.port)}, nil, ""))
		r = w.withHosts(hosts, "-s", s2, "-c", curlCode+"http://myapp.test:"+itoa(up.port)+"/")
		expect(t, r, 0, "200")
	})
}
