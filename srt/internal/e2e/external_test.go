//go:build linux

package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// network.httpProxyPort: the sandbox's HTTP proxy port is relayed to an
// external proxy on host loopback, which sees the client's own requests
// and no credentials, and decides alone (srt's lists do not apply there).
// The SOCKS port is still srt's own proxy, with its credentials and lists.
func TestExternalHTTPProxy(t *testing.T) {
	skipOnLandlock(t)
	up, other := startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ext := startExtHTTPProxy(t)
		s := w.settings(netSettings([]string{up.addr()}, []string{"denied.test"}, `,"httpProxyPort":`+itoa(ext.port())))
		r := w.srt("-s", s, "-c",
			`curl -s --noproxy '' http://`+other.addr()+`/plain | head -1; `+ // not on srt's list: the external proxy decides
				`curl -s --noproxy '' -p http://`+other.addr()+`/tunnel | head -1; `+ // CONNECT through it
				curlCode+`-x "$FTP_PROXY" http://`+up.addr()+`/socks; `+ // srt's SOCKS, allowed
				curlCode+`-x "$FTP_PROXY" http://`+other.addr()+`/socks; echo socks-refused=$?; `+ // srt's SOCKS, not allowed
				curlCode+`-x socks5h://localhost:1080 http://`+up.addr()+`/; echo socks-no-credentials=$?`)
		expect(t, r, 0, "upstream saw GET /plain host="+other.addr()+"\n", "upstream saw GET /tunnel host="+other.addr()+"\n",
			"200\n", "socks-refused=97", "socks-no-credentials=97")
		got := ext.requests()
		for _, want := range []string{"GET http://" + other.addr() + "/plain no-auth", "CONNECT " + other.addr() + " no-auth"} {
			if !strings.Contains(got, want) {
				t.Fatalf("the external proxy saw %q, want %q\n%s", got, want, r)
			}
		}
		if strings.Contains(got, "/socks") || strings.Contains(got, "auth=") {
			t.Fatalf("the external proxy saw %q", got)
		}
		// The environment: no credentials toward the external proxy.
		r = w.sh(netSettings(nil, nil, `,"httpProxyPort":`+itoa(ext.port())), "env | sort")
		expect(t, r, 0, "HTTP_PROXY=http://localhost:3128\n", "HTTPS_PROXY=http://localhost:3128\n", "https_proxy=http://localhost:3128\n",
			"ALL_PROXY=http://localhost:3128\n", "GRPC_PROXY=http://localhost:3128\n", "DOCKER_HTTPS_PROXY=http://localhost:3128\n",
			"CLOUDSDK_PROXY_PORT=3128\n", "FTP_PROXY=socks5h://srt.", "GIT_SSH_COMMAND=ssh ",
			"!CLOUDSDK_PROXY_USERNAME", "!CLOUDSDK_PROXY_PASSWORD", "!GIT_CONFIG_PARAMETERS", "!HTTP_PROXY=http://srt")
	})
}

// network.socksProxyPort: SOCKS clients reach the external SOCKS5 server
// (offering no credentials); the HTTP port is still srt's own proxy, which
// still wants its credentials and still applies the lists.
func TestExternalSOCKSProxy(t *testing.T) {
	skipOnLandlock(t)
	up, other := startUpstream(t), startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ext := startExtSOCKS(t)
		s := w.settings(netSettings([]string{up.addr()}, []string{"denied.test"}, `,"socksProxyPort":`+itoa(ext.port())))
		r := w.srt("-s", s, "-c",
			`curl -s --noproxy '' --socks5-hostname localhost:1080 http://`+other.addr()+`/a | head -1; `+
				`curl -s --noproxy '' -x "$FTP_PROXY" http://`+other.addr()+`/b | head -1; `+
				curlCode+`http://`+up.addr()+`/; `+ // srt's HTTP proxy, allowed
				curlCode+`http://`+other.addr()+`/; `+ // not allowed
				curlCode+`http://denied.test/; `+ // denied
				curlCode+`--proxy http://localhost:3128 http://`+up.addr()+`/`) // no credentials
		expect(t, r, 0, "upstream saw GET /a host="+other.addr()+"\n", "upstream saw GET /b host="+other.addr()+"\n")
		if !strings.HasSuffix(r.stdout, "200\n403\n403\n407\n") {
			t.Fatalf("srt's own HTTP proxy: %s", r)
		}
		// curl offers no username and password: FTP_PROXY carries no
		// credentials toward the external proxy.
		if got := ext.requests(); got != "userpass=false "+other.addr()+"\nuserpass=false "+other.addr() {
			t.Fatalf("the SOCKS server saw %q\n%s", got, r)
		}
		r = w.sh(netSettings(nil, nil, `,"socksProxyPort":`+itoa(ext.port())), "env | sort")
		expect(t, r, 0, "FTP_PROXY=socks5h://localhost:1080\n", "ftp_proxy=socks5h://localhost:1080\n", "HTTP_PROXY=http://srt.",
			"GIT_CONFIG_PARAMETERS='http.proxyAuthMethod=basic'\n", "CLOUDSDK_PROXY_USERNAME=srt.")
	})
}

// Both ports set: srt decides nothing, so it starts no decider (srt-proxy
// alone relays) and generates no credentials at all.
func TestExternalProxiesOnly(t *testing.T) {
	skipOnLandlock(t)
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		httpExt, socksExt := startExtHTTPProxy(t), startExtSOCKS(t)
		s := w.settings(netSettings(nil, nil, `,"httpProxyPort":`+itoa(httpExt.port())+`,"socksProxyPort":`+itoa(socksExt.port())))
		cmd := w.command(nil, "-s", s, "-c", `env | grep -i -e proxy= -e proxy_ -e GIT_CONFIG_PARAMETERS | sort; `+
			`curl -s --noproxy '' http://`+up.addr()+`/h | head -1; curl -s --noproxy '' -x "$FTP_PROXY" http://`+up.addr()+`/s | head -1; `+
			`echo requests-done; while [ ! -e go ]; do sleep 0.05; done`)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return strings.Contains(out.String(), "requests-done") }, "the requests:\n"+out.String())
		// The proxies have run by now: srt-proxy is there, the decider not.
		if n := children(cmd.Process.Pid, filepath.Join(bin, "srt-proxy")); n != 1 {
			t.Errorf("srt runs %d srt-proxy processes, want 1", n)
		}
		if n := children(cmd.Process.Pid, filepath.Join(bin, "decider")); n != 0 {
			t.Errorf("srt runs %d decider processes, want none", n)
		}
		w.write("home/proj/go", "")
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		got := out.String()
		for _, want := range []string{"upstream saw GET /h host=" + up.addr(), "upstream saw GET /s host=" + up.addr(),
			"HTTP_PROXY=http://localhost:3128\n", "FTP_PROXY=socks5h://localhost:1080\n", "ALL_PROXY=http://localhost:3128\n"} {
			if !strings.Contains(got, want) {
				t.Fatalf("output lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "@localhost") || strings.Contains(got, "GIT_CONFIG_PARAMETERS") || strings.Contains(got, "CLOUDSDK_PROXY_USERNAME") {
			t.Fatalf("credentials in the environment:\n%s", got)
		}
		if !strings.Contains(httpExt.requests(), "GET http://"+up.addr()+"/h no-auth") || socksExt.requests() != "userpass=false "+up.addr() {
			t.Fatalf("the external proxies saw %q and %q", httpExt.requests(), socksExt.requests())
		}
	})
}

// children counts the child processes of parent whose executable is exe.
func children(parent int, exe string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after ")".
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		if p, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && p == exe {
			n++
		}
	}
	return n
}

// When nothing listens on the external proxy's port, the sandbox's
// connections are closed (a relay cannot answer in HTTP), srt-proxy says
// so once, naming the setting and the port, and the command's status
// passes through.
func TestExternalProxyDown(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		s := w.settings(netSettings(nil, nil, `,"httpProxyPort":`+itoa(port)))
		connect := filepath.Join(bin, "srt-init") + " --srt-connect=v1 127.0.0.1 22 </dev/null"
		r := w.srt("-s", s, "-c", `curl -s --noproxy '' http://`+up.addr()+`/; echo curl=$?; curl -s --noproxy '' http://`+up.addr()+`/; echo curl=$?; `+connect+`; exit 7`)
		// curl 52: empty reply from the proxy.
		expect(t, r, 7, "curl=52\ncurl=52\n", "sandbox proxy: 127.0.0.1:22: the proxy closed the connection without answering")
		warning := fmt.Sprintf("srt-proxy: warning: network.httpProxyPort is %d, but nothing on this host accepts connections on localhost:%d (", port, port)
		if n := strings.Count(r.stderr, warning); n != 1 {
			t.Fatalf("the warning %q appears %d times, want once:\n%s", warning, n, r)
		}
	})
}

// git over ssh through the external proxy: srt's ProxyCommand opens a
// CONNECT there, without credentials; srt's lists do not apply.
func TestGitOverSSHThroughExternalProxy(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		srv := startSSHD(t, w)
		ext := startExtHTTPProxy(t)
		repo := bareRepo(t, w, "over ssh through the external proxy\n")
		url := fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", w.r.name, srv.port, repo)
		s := `{"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":` + itoa(ext.port()) + `},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
		ssh := `GIT_SSH_COMMAND="$GIT_SSH_COMMAND -F $HOME/.ssh/config" `
		r := w.sh(s, ssh+"git clone -q -b main "+url+" out && cat out/README")
		expect(t, r, 0, "over ssh through the external proxy")
		if want := "CONNECT 127.0.0.1:" + itoa(srv.port) + " no-auth"; !strings.Contains(ext.requests(), want) {
			t.Fatalf("the external proxy saw %q, want %q", ext.requests(), want)
		}
	})
}

// A live update cannot change the external proxy ports: srt says so and
// keeps the ones it started with.
func TestExternalProxyPortsAreReadAtStart(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ext := startExtHTTPProxy(t)
		s := w.settings(netSettings(nil, nil, `,"httpProxyPort":`+itoa(ext.port())))
		out := &syncBuffer{}
		cmd, wr := w.startControlled(nil, out, out, "-s", s, "-c", `while [ ! -e go ]; do sleep 0.05; done; curl -s --noproxy '' http://`+up.addr()+`/after | head -1`)
		wr.Write([]byte(netSettings(nil, nil, `,"socksProxyPort":1081`) + "\n"))
		waitFor(t, func() bool { return strings.Contains(out.String(), "network.socksProxyPort") }, "the warning:\n"+out.String())
		w.write("home/proj/go", "")
		waitExit(t, cmd, out)
		got := out.String()
		for _, want := range []string{
			"srt: warning: the update changes network.httpProxyPort, which srt reads only when it starts; it keeps the value it started with (start a new srt, or a new Manager, to change it)\n",
			"srt: warning: the update changes network.socksProxyPort, which srt reads only when it starts;",
			"upstream saw GET /after",
		} {
			if !strings.Contains(got, want) {
				t.Fatalf("output lacks %q:\n%s", want, got)
			}
		}
		if !strings.Contains(ext.requests(), "GET http://"+up.addr()+"/after no-auth") {
			t.Fatalf("the external proxy saw %q", ext.requests())
		}
	})
}
