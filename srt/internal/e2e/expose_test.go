//go:build linux

package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// startServer runs exposeServer(listen...) in a sandbox with the settings
// and waits until it listens; stop ends it.
func (w *workspace) startServer(settings string, listen ...string) (out func() string, stop func()) {
	t := w.t
	t.Helper()
	os.Remove(w.path("home/proj/ready"))
	os.Remove(w.path("home/proj/stop"))
	cmd := w.command(nil, "-s", w.settings(settings), "-c", exposeServer(listen...))
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop = func() {
		w.write("home/proj/stop", "")
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	for i := 0; !exists(w.path("home/proj/ready")); i++ {
		if i == 200 {
			stop()
			t.Fatalf("the server inside never got ready:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return buf.String, stop
}

// httpGet fetches url from the host, 5 s at most.
func httpGet(url string) (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	r, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return string(b), err
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
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		exposed, exposed6, hidden := freePort(t), freePort(t), freePort(t)
		s := `{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[` + itoa(exposed) + `,` + itoa(exposed6) + `]},"filesystem":` + writeCwd + `}`
		out, stop := w.startServer(s, "127.0.0.1:"+itoa(exposed), "::1:"+itoa(exposed6), "127.0.0.1:"+itoa(hidden))
		defer stop()
		get := httpGet
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
					t.Fatalf("exposed port: %s\n%s", e, out())
				}
			}
		}
		// curl on the host, as a user would: the exposed port answers,
		// the port not listed stays the sandbox's own (nothing listens on
		// the host's side: connection refused, curl's exit 7).
		curl := func(port int) (string, int) {
			c := exec.Command("curl", "-sS", "--max-time", "5", "http://127.0.0.1:"+itoa(port)+"/")
			b, _ := c.CombinedOutput()
			return string(b), c.ProcessState.ExitCode()
		}
		if got, code := curl(exposed); code != 0 || got != "inside "+itoa(exposed)+"\n" {
			t.Fatalf("curl on the host to the exposed port: exit %d, %q", code, got)
		}
		if got, code := curl(hidden); code != 7 {
			t.Fatalf("ESCAPE or surprise: curl on the host to a port not listed in exposeLoopbackPorts: exit %d, %q (want 7, connection refused)", code, got)
		}
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

// TestAllowLocalBinding: with network.allowLocalBinding every port a
// server of the command listens on (its loopback or every address) is
// reachable at the same port on the host's loopback once it listens, as
// on macOS; srt's own ports inside are not exposed; a port the host uses
// already is said once and left alone; without the setting nothing is.
func TestAllowLocalBinding(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		v4, any6 := freePort(t), freePort(t)
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		bp := busy.Addr().(*net.TCPAddr).Port
		run := func(settings string, check func(out func() string)) {
			out, stop := w.startServer(settings, "127.0.0.1:"+itoa(v4), ":::"+itoa(any6), "127.0.0.1:"+itoa(bp))
			defer stop()
			check(out)
		}
		get := httpGet
		// getSoon retries while srt has not yet seen the listener (it
		// looks every 200 ms).
		getSoon := func(url string) (string, error) {
			var got string
			var err error
			for range 50 {
				if got, err = get(url); err == nil {
					return got, nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			return got, err
		}
		on := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowLocalBinding":true},"filesystem":` + writeCwd + `}`
		run(on, func(out func() string) {
			for _, c := range []struct{ url, want string }{
				{"http://127.0.0.1:" + itoa(v4) + "/", "inside " + itoa(v4) + "\n"},
				{"http://[::1]:" + itoa(v4) + "/", "inside " + itoa(v4) + "\n"},
				{"http://127.0.0.1:" + itoa(any6) + "/", "inside " + itoa(any6) + "\n"},
			} {
				if got, err := getSoon(c.url); err != nil || got != c.want {
					t.Fatalf("%s: %q %v\n%s", c.url, got, err, out())
				}
			}
			// srt's own proxy port inside is not the host's.
			if c, err := net.DialTimeout("tcp", "127.0.0.1:3128", time.Second); err == nil {
				c.Close()
				// Something on the host may listen there: it must not be srt.
				if strings.Contains(out(), "port 3128") {
					t.Fatalf("srt exposed its own proxy port:\n%s", out())
				}
			}
			for i := 0; !strings.Contains(out(), "srt: warning: network.allowLocalBinding: the command listens on port "+itoa(bp)+", which this host's loopback cannot give it"); i++ {
				if i == 100 {
					t.Fatalf("no warning for the port the host uses:\n%s", out())
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
		off := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + writeCwd + `}`
		run(off, func(out func() string) {
			time.Sleep(600 * time.Millisecond) // three looks, had srt been looking
			if got, err := get("http://127.0.0.1:" + itoa(v4) + "/"); err == nil {
				t.Fatalf("ESCAPE: without allowLocalBinding a server inside answered from the host: %q", got)
			}
		})
	})
}
