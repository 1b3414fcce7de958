//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The 11 variables of §5.2, then those of package managers that read a
// CA file of their own configuration first (issue 14, item 16).
var trustVars = []string{
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
	"GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT",
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE",
	"npm_config_cafile", "YARN_HTTPS_CA_FILE_PATH", "BUNDLE_SSL_CA_CERT", "HEX_CACERTS_PATH", "CONDA_SSL_VERIFY",
}

// TestTLSTerminateClients: with tlsTerminate and the upstream's CA in
// extraCaCertPaths, curl, Python, git and openssl inside the sandbox reach
// a real HTTPS server through the terminating proxy: they trust the minted
// leaf through the trust variables, srt-proxy trusts the upstream through
// extraCaCertPaths. A denied host is still refused as without termination.
func TestTLSTerminateClients(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := up.tlsSettings(w, `{"extraCaCertPaths":["`+up.caFile(w)+`","`+w.path("missing.pem")+`"]}`, "")
		target := up.https("tls.test")
		script := strings.Join([]string{
			`curl -sS https://` + target + `/curl?q=1`,
			`python3 -c 'import urllib.request; print(urllib.request.urlopen("https://` + target + `/py").read().decode().splitlines()[0])'`,
			`git clone -q https://` + target + `/repo.git "$TMPDIR/r" && cat "$TMPDIR/r/README"`,
			// openssl has no proxy variables: credentials by hand.
			`u=${HTTPS_PROXY#http://}; c=${u%@*}; openssl s_client -proxy localhost:3128 -proxy_user "${c%%:*}" -proxy_pass "pass:${c#*:}" ` +
				`-connect ` + target + ` -servername tls.test -CAfile "$SSL_CERT_FILE" -verify_return_error </dev/null 2>/dev/null | grep -E '^(subject|issuer)=|Verify return code'`,
			`echo "bundle $(grep -c BEGIN "$SSL_CERT_FILE")"`,
			`for v in ` + strings.Join(trustVars, " ") + `; do eval f=\$$v; [ "$f" = /dev/srt/trust-bundle.crt ] && [ -r "$f" ] && echo "$v readable"; done`,
			`curl -si http://denied.test/ | tr -d '\r' | grep -E '^HTTP|^X-Proxy-Error|^Connection blocked'`,
			`curl -sv https://denied.test/ 2>&1 | grep '< HTTP'`,
		}, "; ")
		r := w.withHosts(upstreamHosts, "-s", s, "-c", script)
		expect(t, r, 0,
			"upstream saw https GET /curl?q=1 host="+target,
			"upstream saw https GET /py host="+target,
			"hello from git",
			"subject=CN = tls.test", "issuer=CN = sandbox-runtime ephemeral CA", "Verify return code: 0 (ok)",
			"HTTP/1.1 403 Forbidden\nX-Proxy-Error: blocked-by-allowlist\n", "Connection blocked by network allowlist",
			"< HTTP/1.1 403 host is on the deny list")
		for _, v := range trustVars {
			if !strings.Contains(r.stdout, v+" readable\n") {
				t.Errorf("%s does not name a readable bundle:\n%s", v, r)
			}
		}
		i := strings.Index(r.stdout, "bundle ")
		n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(r.stdout[i+len("bundle "):], "\n", 2)[0]))
		if i < 0 || n <= 100 {
			t.Errorf("the bundle holds %d certificates, want the host's roots too:\n%s", n, r)
		}
		// Nothing is left behind in srt's state directory.
		if ents, _ := filepath.Glob(filepath.Join(os.TempDir(), "srt-"+itoa(w.r.uid), "srt-ca-*")); len(ents) > 0 {
			t.Errorf("left behind: %v", ents)
		}
	})
}

// TestTLSTerminateUserCA: the settings' CA signs the leaves; its key is
// never readable inside: not under a covering denyRead with an allowRead
// naming it (it is not there at all), nor with no rules (every open
// fails), while its certificate stays readable under the denyRead.
func TestTLSTerminateUserCA(t *testing.T) {
	up := startTLSUpstream(t)
	ca := newTestCA(t, "my corp CA", true)
	forEach(t, func(t *testing.T, w *workspace) {
		cert := w.write("home/ca/ca.crt", string(ca.certPEM))
		key := w.write("home/ca/ca.key", string(ca.keyPEM))
		os.Chmod(key, 0o600)
		network := `"network":{"allowedDomains":["` + strings.Join(up.allowed(), `","`) + `"],"deniedDomains":[],` +
			`"tlsTerminate":{"caCertPath":"` + cert + `","caKeyPath":"` + key + `","extraCaCertPaths":["` + up.caFile(w) + `"]}}`
		s := w.settings(`{` + network + `,"filesystem":{"denyRead":["` + w.path("home/ca") + `"],"allowRead":["` + key + `"],"allowWrite":[],"denyWrite":[]}}`)
		r := w.withHosts(upstreamHosts, "-s", s, "-c",
			`u=${HTTPS_PROXY#http://}; c=${u%@*}; openssl s_client -proxy localhost:3128 -proxy_user "${c%%:*}" -proxy_pass "pass:${c#*:}" `+
				`-connect `+up.https("tls.test")+` -servername tls.test -CAfile "$SSL_CERT_FILE" -verify_return_error </dev/null 2>/dev/null | grep -E '^(subject|issuer)=|Verify return code'; `+
				`curl -sS https://`+up.https("tls.test")+`/ | head -1; head -1 `+cert+`; cat `+key+` 2>&1; echo "cat-exit=$?"`)
		expect(t, r, 0, "subject=CN = tls.test", "issuer=CN = my corp CA", "Verify return code: 0 (ok)",
			"upstream saw https GET / host="+up.https("tls.test"),
			"-----BEGIN CERTIFICATE-----\n",
			"cat: "+key+": No such file or directory\ncat-exit=1", "!PRIVATE KEY")
		s = w.settings(`{` + network + `,"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
		r = w.withHosts(upstreamHosts, "-s", s, "-c", `cat `+key+` 2>&1; echo "cat-exit=$?"; curl -sS https://`+up.https("tls.test")+`/ | head -1`)
		expect(t, r, 0, "cat: "+key+": Permission denied\ncat-exit=1", "!PRIVATE KEY", "upstream saw https GET /")
	})
}

// TestTLSTerminateBadCA: a caCertPath/caKeyPath pair that does not match
// is a settings error naming network.tlsTerminate; nothing runs.
func TestTLSTerminateBadCA(t *testing.T) {
	a, b := newTestCA(t, "a", false), newTestCA(t, "b", false)
	forEach(t, func(t *testing.T, w *workspace) {
		cert := w.write("ca/a.crt", string(a.certPEM))
		key := w.write("ca/b.key", string(b.keyPEM))
		s := w.settings(netSettings(nil, nil, `,"tlsTerminate":{"caCertPath":"`+cert+`","caKeyPath":"`+key+`"}`))
		r := w.srt("-s", s, "-c", "touch "+w.path("ran"))
		expect(t, r, 1, "srt: "+s+" does not hold a valid config — network.tlsTerminate: tlsTerminate: the CA key does not match the CA certificate\n")
		if exists(w.path("ran")) {
			t.Error("the command ran")
		}
		r = w.srt("-s", w.settings(netSettings(nil, nil, `,"tlsTerminate":{"caCertPath":"`+w.path("nope.crt")+`","caKeyPath":"`+key+`"}`)), "-c", "touch "+w.path("ran"))
		expect(t, r, 1, "network.tlsTerminate: tlsTerminate: caCertPath cannot be read: open "+w.path("nope.crt")+": no such file or directory")
		if exists(w.path("ran")) {
			t.Error("the command ran")
		}
	})
}

// TestTLSTerminateExcludeDomains: an excluded host is tunnelled opaquely,
// so a client that pins the server's own CA reaches it, while the same
// client refuses a terminated host's minted certificate.
func TestTLSTerminateExcludeDomains(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		ca := up.caFile(w)
		s := up.tlsSettings(w, `{"excludeDomains":["pinned.test"],"extraCaCertPaths":["`+ca+`"]}`, "")
		r := w.withHosts(upstreamHosts, "-s", s, "-c",
			`curl -sS --cacert `+ca+` https://`+up.https("pinned.test")+`/pinned | head -1; `+
				`curl -sS --cacert `+ca+` https://`+up.https("tls.test")+`/; echo "curl-exit=$?"`)
		expect(t, r, 0, "upstream saw https GET /pinned host="+up.https("pinned.test"), "curl-exit=60")
	})
}

// TestTLSTerminateMaxTunnels: past maxTunnels a CONNECT gets 503 (a
// violation, recorded once).
func TestTLSTerminateMaxTunnels(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := up.tlsSettings(w, `{"maxTunnels":1,"extraCaCertPaths":["`+up.caFile(w)+`"]}`, "")
		target := up.https("tls.test")
		// The first CONNECT holds the one slot while it waits for a
		// ClientHello; the second is refused.
		r := w.withHosts(upstreamHosts, "-s", s, "--show-violations", "-c", py(`
a, head = connect("`+target+`")
print(head.splitlines()[0])
b, head = connect("`+target+`")
print(head + rest(b))
`))
		expect(t, r, 0, "HTTP/1.1 200 Connection Established\n",
			"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: too-many-tunnels\r\n\r\ntoo many TLS-terminated tunnels at once",
			"deny http-request CONNECT "+target+" (too many TLS-terminated tunnels at once)")
	})
}

// TestRefuseOpaqueTunnels: only tunnels the proxy can inspect pass: a
// CONNECT to an excluded host gets 403, every SOCKS5 CONNECT reply 0x01, a
// terminated tunnel that carries no TLS is destroyed; each is a violation.
// Without tlsTerminate every CONNECT is refused.
func TestRefuseOpaqueTunnels(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := up.tlsSettings(w, `{"excludeDomains":["pinned.test"],"extraCaCertPaths":["`+up.caFile(w)+`"]}`, `,"refuseOpaqueTunnels":true`)
		target, pinned := up.https("tls.test"), up.https("pinned.test")
		r := w.withHosts(upstreamHosts, "-s", s, "--show-violations", "-c",
			`curl -sS https://`+target+`/ok | head -1; `+
				`curl -sS -x "$FTP_PROXY" https://`+target+`/; echo "socks-exit=$?"; `+
				py(`
s, head = connect("`+pinned+`")
print(head + rest(s))
s, head = connect("`+target+`")
print(head.splitlines()[0])
s.sendall(b"plain text, not TLS\n")
print("after plain bytes: %r" % rest(s))
`))
		expect(t, r, 0, "upstream saw https GET /ok",
			"(97)", "socks-exit=97",
			"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\nthis proxy does not tunnel CONNECTs it cannot inspect",
			"HTTP/1.1 200 Connection Established\nafter plain bytes: ''",
			"<sandbox_violations>",
			"deny socks-tunnel "+target+" (refuseOpaqueTunnels)",
			"deny http-request CONNECT "+pinned+" (this proxy does not tunnel CONNECTs it cannot inspect)",
			"deny http-request CONNECT "+target+" (refuseOpaqueTunnels: the tunnel's first bytes are not a TLS ClientHello)")
		// Without termination nothing can be inspected.
		s = up.tlsSettings(w, "", `,"refuseOpaqueTunnels":true`)
		r = w.withHosts(upstreamHosts, "-s", s, "-c", `curl -sv https://`+target+`/ 2>&1 | grep '< HTTP'; `+curlCode+`http://`+up.http("tls.test")+`/`)
		expect(t, r, 0, "< HTTP/1.1 403 Forbidden", "\n200\n")
	})
}

// TestRequestOptionsPlainAndTerminated: requireHostMatch,
// ambiguousRequestTarget and stripResponseHeaders hold for plain HTTP as
// inside terminated tunnels.
func TestRequestOptionsPlainAndTerminated(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		head := func(url string, args string) string {
			return `curl -si --path-as-is ` + args + ` ` + url + ` | tr -d '\r' | grep -E '^HTTP|^X-Proxy-Error|^X-Secret|^X-Kept|^Host header|^ambiguous' | grep -v 'Connection Established'; `
		}
		plain, tls := "http://"+up.http("tls.test"), "https://"+up.https("tls.test")
		s := up.tlsSettings(w, `{"extraCaCertPaths":["`+up.caFile(w)+`"]}`,
			`,"requireHostMatch":true,"ambiguousRequestTarget":"refuse","stripResponseHeaders":["x_SECRET"]`)
		r := w.withHosts(upstreamHosts, "-s", s, "-c",
			`echo plain; `+head(plain+"/a", "-H 'Host: other.test'")+head(plain+"/a/../b", "")+head(plain+"/ok", "")+
				`echo tls; `+head(tls+"/a", "-H 'Host: other.test'")+head(tls+"/a/../b", "")+head(tls+"/ok", ""))
		want := "HTTP/1.1 421 Misdirected Request\nX-Proxy-Error: misdirected-request\nHost header does not match the request target\n" +
			"HTTP/1.1 400 Bad Request\nX-Proxy-Error: ambiguous-request-target\nambiguous request-target: as spelled and normalized it names different resources\n" +
			"HTTP/1.1 200 OK\nX-Kept: yes\n"
		if r.stdout != "plain\n"+want+"tls\n"+want {
			t.Errorf("got:\n%s\nwant for both:\n%s", r, want)
		}
		// Without the key plain-HTTP targets go as spelled; terminated
		// tunnels refuse ambiguous ones by default.
		s = up.tlsSettings(w, `{"extraCaCertPaths":["`+up.caFile(w)+`"]}`, "")
		r = w.withHosts(upstreamHosts, "-s", s, "-c", curlCode+"--path-as-is "+plain+"/a/../b; "+curlCode+"--path-as-is "+tls+"/a/../b")
		expect(t, r, 0)
		if r.stdout != "200\n400\n" {
			t.Errorf("defaults: %s", r)
		}
	})
}

// TestPlaintextHeaderSet: a decider that sets headers gets them on
// terminated requests, and on plain HTTP only with allowPlaintextHeaderSet
// (else 403). The reference decider never sets headers: a decider that
// does stands in for it.
func TestPlaintextHeaderSet(t *testing.T) {
	up := startTLSUpstream(t)
	dir := fakeDeciderBin(t)
	forEach(t, func(t *testing.T, w *workspace) {
		for _, c := range []struct {
			extra, want string
		}{
			{"", "HTTP/1.1 403 Forbidden\nX-Proxy-Error: blocked-by-sandbox-runtime\nthe allow decision sets headers, and headers are not set on plain-HTTP requests unless plaintext header sets are enabled; nothing was forwarded\n" +
				"header x-set: 1\n"},
			{`,"allowPlaintextHeaderSet":true`, "HTTP/1.1 200 OK\nheader x-set: 1\nheader x-set: 1\n"},
		} {
			s := up.tlsSettings(w, `{"extraCaCertPaths":["`+up.caFile(w)+`"]}`, c.extra)
			cmd := `curl -si http://` + up.http("tls.test") + `/p | tr -d '\r' | grep -E '^HTTP|^X-Proxy-Error|^the allow|^header x-set'; ` +
				`curl -s https://` + up.https("tls.test") + `/p | grep '^header x-set'`
			args := []string{"-s", s, "-c", cmd}
			r := w.withHostsBin(upstreamHosts, filepath.Join(dir, "srt"), []string{"FAKE_DECIDER=setheader"}, args...)
			if r.stdout != c.want {
				t.Errorf("settings %q: got\n%s\nwant\n%s", c.extra, r, c.want)
			}
		}
	})
}

// TestViolationsFDForProxyRefusals: the proxy's refusals after an allow
// reach --violations-fd as JSON lines.
func TestViolationsFDForProxyRefusals(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{"127.0.0.1:" + itoa(up.plainPort)}, nil, `,"refuseOpaqueTunnels":true`))
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		cmd := w.command(nil, "--violations-fd", "3", "-s", s, "-c", `curl -s --noproxy "" -x "$FTP_PROXY" http://127.0.0.1:`+itoa(up.plainPort)+`/; echo "socks-exit=$?"`)
		cmd.ExtraFiles = []*os.File{wr}
		out, _ := cmd.Output()
		wr.Close()
		lines, _ := readAll(rd)
		if !strings.Contains(string(out), "socks-exit=97") || !strings.Contains(lines, `"deny socks-tunnel 127.0.0.1:`+itoa(up.plainPort)+` (refuseOpaqueTunnels)"`) {
			t.Errorf("stdout %q, violations %q", out, lines)
		}
	})
}

// TestTLSTerminateUntrustedUpstream: an upstream whose certificate
// srt-proxy does not trust (its CA not in extraCaCertPaths) gets a 502
// that says so and names the fix, in the body and X-Proxy-Error, and srt
// says it once on stderr however many requests meet it (issue 14: a bare
// 502, the cause only under -d).
func TestTLSTerminateUntrustedUpstream(t *testing.T) {
	up := startTLSUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := up.tlsSettings(w, `{}`, "")
		target := up.https("tls.test")
		get := `curl -s -D - https://` + target + `/ | tr -d '\r'; `
		r := w.withHosts(upstreamHosts, "-s", s, "-c", get+get+get)
		why := "upstream " + target + ": certificate not trusted (x509: certificate signed by unknown authority); " +
			"if you trust it, add its CA certificate to network.tlsTerminate.extraCaCertPaths"
		expect(t, r, 0, "HTTP/1.1 502 Bad Gateway\n", "X-Proxy-Error: upstream-certificate-not-trusted\n", why+"\n", "!upstream saw")
		if n := strings.Count(r.stdout, why+"\n"); n != 3 {
			t.Errorf("%d of 3 answers say why:\n%s", n, r)
		}
		if n := strings.Count(r.stderr, "srt-proxy: warning: "+why+"\n"); n != 1 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("stderr says it %d times, want once and nothing else:\n%s", n, r)
		}
	})
}
