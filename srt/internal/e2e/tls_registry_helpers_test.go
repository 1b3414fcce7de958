//go:build linux

package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// registry is a loopback HTTPS server that looks like the registries the
// package managers inside a sandbox use, as registry.test (its certificate
// from a CA of its own): an npm registry (package hello-srt), a PEP 503
// simple index with a wheel (hello-srt), a Go module proxy
// (example.test/hello), and a git repository over git's dumb HTTP
// protocol (/repo.git). It records the paths it served.
type registry struct {
	ca   *testCA
	port int

	mu     sync.Mutex
	served []string
}

// registryHosts is the private /etc/hosts of the registry tests.
const registryHosts = "127.0.0.1 localhost\n127.0.0.1 registry.test\n"

func startRegistry(t *testing.T) *registry {
	t.Helper()
	r := &registry{ca: newTestCA(t, "registry test CA", false)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.port = ln.Addr().(*net.TCPAddr).Port
	base := "https://registry.test:" + itoa(r.port)
	tgz := npmTarball(t)
	wheel := wheelFile(t)
	modZip := goModuleZip(t)
	repo := http.StripPrefix("/repo.git/", http.FileServer(http.Dir(gitRepo(t))))
	files := map[string]struct {
		typ  string
		body []byte
	}{
		"/hello-srt": {"application/json", []byte(fmt.Sprintf(`{"name":"hello-srt","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"hello-srt","version":"1.0.0",`+
			`"dist":{"tarball":"%s/hello-srt/-/hello-srt-1.0.0.tgz","shasum":"%x","integrity":"sha512-%s"}}}}`,
			base, sha1.Sum(tgz), base64.StdEncoding.EncodeToString(sha512Of(tgz))))},
		"/hello-srt/-/hello-srt-1.0.0.tgz": {"application/octet-stream", tgz},
		"/simple/hello-srt/": {"text/html", []byte(fmt.Sprintf(`<!DOCTYPE html><html><body><a href="/files/hello_srt-1.0-py3-none-any.whl#sha256=%x">hello_srt-1.0-py3-none-any.whl</a></body></html>`,
			sha256.Sum256(wheel)))},
		"/files/hello_srt-1.0-py3-none-any.whl": {"application/octet-stream", wheel},
		"/example.test/hello/@v/list":           {"text/plain", []byte("v1.0.0\n")},
		"/example.test/hello/@v/v1.0.0.info":    {"application/json", []byte(`{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`)},
		"/example.test/hello/@v/v1.0.0.mod":     {"text/plain", []byte("module example.test/hello\n\ngo 1.20\n")},
		"/example.test/hello/@v/v1.0.0.zip":     {"application/zip", modZip},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.served = append(r.served, req.URL.Path)
		r.mu.Unlock()
		if strings.HasPrefix(req.URL.Path, "/repo.git/") {
			repo.ServeHTTP(w, req)
			return
		}
		f, ok := files[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", f.typ)
		w.Write(f.body)
	})}
	go srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{r.ca.serverCert(t, "registry.test")}}))
	t.Cleanup(func() { srv.Close() })
	return r
}

// url is the registry's base URL.
func (r *registry) url() string { return "https://registry.test:" + itoa(r.port) }

// servedAll lists the paths the registry served so far.
func (r *registry) servedAll() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.served, "\n")
}

func sha512Of(b []byte) []byte {
	s := sha512.Sum512(b)
	return s[:]
}

// npmTarball is the package hello-srt 1.0.0 as npm packs it.
func npmTarball(t *testing.T) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name":"hello-srt","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = 'hello from npm';\n",
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// wheelFile is hello_srt 1.0 as a pure-Python wheel.
func wheelFile(t *testing.T) []byte {
	files := []struct{ name, body string }{
		{"hello_srt/__init__.py", "GREETING = 'hello from pip'\n"},
		{"hello_srt-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: hello-srt\nVersion: 1.0\n"},
		{"hello_srt-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: srt-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("hello_srt-1.0.dist-info/RECORD,,\n")
	files = append(files, struct{ name, body string }{"hello_srt-1.0.dist-info/RECORD", record.String()})
	return zipOf(t, files)
}

// goModuleZip is example.test/hello v1.0.0 as a module proxy serves it.
func goModuleZip(t *testing.T) []byte {
	const dir = "example.test/hello@v1.0.0/"
	return zipOf(t, []struct{ name, body string }{
		{dir + "go.mod", "module example.test/hello\n\ngo 1.20\n"},
		{dir + "hello.go", "package hello\n\n// Greeting is what the module says.\nconst Greeting = \"hello from go\"\n"},
	})
}

func zipOf(t *testing.T, files []struct{ name, body string }) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
