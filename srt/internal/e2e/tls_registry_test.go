//go:build linux

package e2e

import (
	"strings"
	"testing"
)

// TestTLSTerminatePackageManagers is item 16 of issue 14: the package
// managers users run inside a sandbox, as real clients, fetch from a
// registry over HTTPS through the terminating proxy, each configured the
// way companies configure them, with a CA file of their own (here one that
// does not sign the proxy's certificates). npm then ignored
// NODE_EXTRA_CA_CERTS ("unable to verify the first certificate"): srt now
// sets npm_config_cafile, which wins over a cafile in ~/.npmrc. pip
// (PIP_CERT over pip.conf's cert), git (GIT_SSL_CAINFO over
// http.sslCAInfo), curl (CURL_CA_BUNDLE) and go (SSL_CERT_FILE, for a
// module proxy) get the bundle too. The registry must have served each.
func TestTLSTerminatePackageManagers(t *testing.T) {
	reg := startRegistry(t)
	forEach(t, func(t *testing.T, w *workspace) {
		caFile := w.write("registry-ca.pem", string(reg.ca.certPEM))
		// Each client's own CA setting names a CA that did not sign the
		// proxy's certificates.
		w.write("home/.npmrc", "cafile="+caFile+"\n")
		w.write("home/.config/pip/pip.conf", "[global]\ncert = "+caFile+"\n")
		w.write("home/.gitconfig", "[http]\n\tsslCAInfo = "+caFile+"\n")
		s := w.settings(netSettings([]string{"registry.test", "127.0.0.1:" + itoa(reg.port)}, nil,
			`,"tlsTerminate":{"extraCaCertPaths":["`+caFile+`"]}`))
		script := strings.Join([]string{
			`cd "$TMPDIR"`,
			`mkdir np && (cd np && npm_config_cache="$TMPDIR/npm-cache" npm install --no-audit --no-fund --registry ` + reg.url() + `/ hello-srt >npm.log 2>&1 && node -p 'require("hello-srt")' || cat npm.log)`,
			`python3 -m pip download --no-cache-dir --no-deps --only-binary=:all: --index-url ` + reg.url() + `/simple/ -d "$TMPDIR/dl" hello-srt >pip.log 2>&1 && ls "$TMPDIR/dl" || cat pip.log`,
			`git clone -q ` + reg.url() + `/repo.git "$TMPDIR/r" && cat "$TMPDIR/r/README"`,
			`curl -sS ` + reg.url() + `/example.test/hello/@v/list`,
			`GOTOOLCHAIN=local GOPROXY=` + reg.url() + ` GOSUMDB=off GOPATH="$TMPDIR/gopath" GOCACHE="$TMPDIR/gocache" /usr/local/go/bin/go mod download -x example.test/hello@v1.0.0 >go.log 2>&1 && cat "$TMPDIR"/gopath/pkg/mod/example.test/hello@v1.0.0/hello.go | grep Greeting || cat go.log`,
			`echo "npm_config_cafile=$npm_config_cafile"`,
		}, "; ")
		r := w.withHosts(registryHosts, "-s", s, "-c", script)
		expect(t, r, 0,
			"hello from npm\n",
			"hello_srt-1.0-py3-none-any.whl\n",
			"hello from git\n",
			"v1.0.0\n",
			`const Greeting = "hello from go"`,
			"npm_config_cafile=/dev/srt/trust-bundle.crt\n")
		for _, p := range []string{"/hello-srt/-/hello-srt-1.0.0.tgz", "/files/hello_srt-1.0-py3-none-any.whl", "/repo.git/info/refs", "/example.test/hello/@v/v1.0.0.zip"} {
			if !strings.Contains(reg.servedAll(), p) {
				t.Errorf("the registry did not serve %s; it served:\n%s", p, reg.servedAll())
			}
		}
	})
}
