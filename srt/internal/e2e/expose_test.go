package e2e

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// exposeServer is the command of the exposure tests: a Python HTTP server
// on each of ports (host "127.0.0.1" or "::1") answering "inside <port>",
// a file "ready" once they listen, and an end once the file "stop"
// appears (20 s at most).
func exposeServer(listen ...string) string {
	return py(`
import http.server, os, socket, sys, threading, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("inside %d\n" % self.server.server_address[1]).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
class V6(http.server.HTTPServer):
    address_family = socket.AF_INET6
for spec in "` + strings.Join(listen, " ") + `".split():
    host, port = spec.rsplit(":", 1)
    cls = V6 if ":" in host else http.server.HTTPServer
    s = cls((host, int(port)), H)
    threading.Thread(target=s.serve_forever, daemon=True).start()
open("ready", "w").close()
for _ in range(200):
    if os.path.exists("stop"): break
    time.sleep(0.1)
`)
}

// freePort is a TCP port nothing listens on at the moment on 127.0.0.1.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestExposeLoopbackPorts: a server the command starts on a listed port of
// the sandbox's loopback is reachable at the same port on the host's
// loopback (IPv4 and IPv6, and an IPv6-only server inside through the
// host's 127.0.0.1); a server on a port not listed is not reachable from
// the host; a port the host already uses, and a port a loopback entry of
// allowedDomains leads the other way, stop srt before anything runs.
func TestExposeLoopbackPorts(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		exposed, exposed6, hidden := freePort(t), freePort(t), freePort(t)
		s := `{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[` + itoa(exposed) + `,` + itoa(exposed6) + `]},"filesystem":` + writeCwd + `}`
		cmd := w.command(nil, "-s", w.settings(s), "-c", exposeServer("127.0.0.1:"+itoa(exposed), "::1:"+itoa(exposed6), "127.0.0.1:"+itoa(hidden)))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		defer func() {
			w.write("home/proj/stop", "")
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}()
		for i := 0; !exists(w.path("home/proj/ready")); i++ {
			if i == 200 {
				t.Fatalf("the server inside never got ready:\n%s", out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		client := &http.Client{Timeout: 5 * time.Second}
		get := func(url string) (string, error) {
			r, err := client.Get(url)
			if err != nil {
				return "", err
			}
			defer r.Body.Close()
			b, err := io.ReadAll(r.Body)
			return string(b), err
		}
		for _, c := range []struct{ url, want string }{
			{"http://127.0.0.1:" + itoa(exposed) + "/", "inside " + itoa(exposed) + "\n"},
			{"http://[::1]:" + itoa(exposed) + "/", "inside " + itoa(exposed) + "\n"},
			{"http://127.0.0.1:" + itoa(exposed6) + "/", "inside " + itoa(exposed6) + "\n"},
		} {
			// Several requests, one after the other and at once.
			errs := make(chan string, 4)
			for range 4 {
				go func() {
					got, err := get(c.url)
					if err != nil || got != c.want {
						errs <- c.url + ": " + got + " " + errString(err)
						return
					}
					errs <- ""
				}()
			}
			for range 4 {
				if e := <-errs; e != "" {
					t.Fatalf("exposed port: %s\n%s", e, out.String())
				}
			}
		}
		// The port not listed stays the sandbox's own.
		if got, err := get("http://127.0.0.1:" + itoa(hidden) + "/"); err == nil {
			t.Fatalf("ESCAPE: a port not listed in exposeLoopbackPorts answered from the host: %q", got)
		}

		// A port the host already uses.
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		bp := busy.Addr().(*net.TCPAddr).Port
		r := w.srt("-s", w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[`+itoa(bp)+`]},"filesystem":`+writeCwd+`}`), "-c", "echo RAN")
		expect(t, r, 1, "srt: sandbox: network.exposeLoopbackPorts: port "+itoa(bp)+" is in use on this host's loopback (127.0.0.1:"+itoa(bp)+"): stop what listens there, or expose another port", "!RAN")
		// A port both exposed and led to the host.
		r = w.srt("-s", w.settings(`{"network":{"allowedDomains":["localhost:`+itoa(hidden)+`"],"deniedDomains":[],"exposeLoopbackPorts":[`+itoa(hidden)+`]},"filesystem":`+writeCwd+`}`), "-c", "echo RAN")
		expect(t, r, 1, "srt: sandbox: network.exposeLoopbackPorts: port "+itoa(hidden)+" is also a loopback entry of network.allowedDomains (127.0.0.1:"+itoa(hidden)+")", "!RAN")
		// srt's own ports inside.
		r = w.srt("-s", w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[3128]},"filesystem":`+writeCwd+`}`), "-c", "echo RAN")
		expect(t, r, 1, "network.exposeLoopbackPorts.0: port 3128 is srt's HTTP proxy port inside the sandbox, which no server there can listen on; expose another port", "!RAN")
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
