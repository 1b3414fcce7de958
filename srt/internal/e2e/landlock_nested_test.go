//go:build linux

package e2e

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLandlockNestedInLandlock: an srt inside an srt sandbox of the
// Landlock backend (which lets its command bind no port) runs its proxies
// on the two spare listeners the outer srt offers, and enforces its own,
// narrower rules: a host both allow is reached; a host the outer allows
// and the inner denies is refused by the inner (403, a violation in the
// inner's store and not the outer's); a host the inner allows and the
// outer denies is refused by the outer (403, the outer's violation); the
// inner command cannot use the outer's proxy past its own; its filesystem
// rules are narrower too; its --control-fd updates its rules live. A
// second srt run after it gets the listeners again (and says so under
// -d), and so does one run after an srt inside was killed (its lease ends
// with it); an srt inside the inner one (a third level) refuses with one
// line saying why; and the outer command, taking the spares itself,
// reaches nothing through them (nobody accepts on them but itself).
func TestLandlockNestedInLandlock(t *testing.T) {
	both := startUpstream(t)
	innerDenies := startUpstream(t)
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	spy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })}
	go spy.Serve(ln)
	t.Cleanup(func() { spy.Close() })
	spyAddr := ln.Addr().String()
	forEach(t, func(t *testing.T, w *workspace) {
		hits.Store(0)
		w.mkdir("home/proj/inner")
		w.mkdir("home/proj/out")
		secret := w.write("home/proj/inner-secret.txt", "INNER-ONLY-SECRET\n")
		outer := w.settings(`{"network":{"allowedDomains":["` + both.addr() + `","` + innerDenies.addr() + `","` + spyAddr + `","*.example.org"],"deniedDomains":[]},` +
			`"filesystem":{"allowWrite":["."],"denyWrite":[],"denyRead":[]}}`)
		inner := w.write("inner.json", `{"network":{"allowedDomains":["`+both.addr()+`","a.example.org","inner-only.test"],"deniedDomains":[]},`+
			`"filesystem":{"allowWrite":["`+w.path("home/proj/inner")+`"],"denyWrite":[],"denyRead":["`+secret+`"]}}`)
		update := w.write("update.json", `{"network":{"allowedDomains":["b.example.org"],"deniedDomains":[]},`+
			`"filesystem":{"allowWrite":["`+w.path("home/proj/inner")+`"],"denyWrite":[],"denyRead":["`+secret+`"]}}`+"\n")
		srt := filepath.Join(bin, "srt")
		if w.r.uid == 0 {
			srt += " --allow-weaker=root"
		}
		innerScript := w.write("inner.sh", strings.Join([]string{
			`c() { echo "$1 $(curl -s -o /dev/null -w '%{http_code}' --noproxy '' "$2")"; }`,
			`c BOTH http://` + both.addr() + `/`,
			`c INNER-DENIES http://` + innerDenies.addr() + `/`,
			`c BOTH-NAME http://a.example.org/`,
			`c INNER-DENIES-NAME http://b.example.org/`,
			`c OUTER-DENIES http://inner-only.test/`,
			`echo "SOCKS $(curl -s -o /dev/null -w '%{http_code}' --noproxy '' -x "$FTP_PROXY" http://` + both.addr() + `/)"`,
			`echo "BYPASS $(curl -s -o /dev/null -w '%{http_code}' --noproxy '' -x "$OUTER_PROXY" http://` + both.addr() + `/)"`,
			`echo "LISTENERS-VAR ${SRT_LANDLOCK_LISTENERS-unset}"`,
			`echo a > inner/a && echo INNER-WRITE-ok`,
			`{ echo b > out/b; } 2>/dev/null || echo INNER-NARROWER-WRITE-refused`,
			`cat ` + secret + ` 2>&1 | sed 's/^/INNER-READ: /'`,
		}, "\n")+"\n")
		grab := w.write("grab.py", `import os, socket
ch = socket.socket(fileno=int(os.environ["SRT_LANDLOCK_LISTENERS"]))
msg, fds, flags, addr = socket.recv_fds(ch, 64, 16, socket.MSG_DONTWAIT)
ls = [socket.socket(fileno=f) for f in fds]
for p in sorted({l.getsockname()[1] for l in ls}):
    c = socket.create_connection(("127.0.0.1", p), timeout=2)
    c.sendall(b"GET http://`+spyAddr+`/ HTTP/1.1\r\nHost: `+spyAddr+`\r\n\r\n")
    try:
        print("GOT-REPLY", c.recv(100))
    except socket.timeout:
        print("NO-ANSWER")
for l in ls:
    if l.family == socket.AF_INET:
        l.settimeout(2)
        print("OWN", l.accept()[0].recv(3))
`)
		r := w.srt(append(landlockArgs(w), "--show-violations", "-s", outer, "-c", strings.Join([]string{
			`OUTER_PROXY=$HTTP_PROXY ` + srt + ` --show-violations -s ` + inner + ` -c 'sh ` + innerScript + `' 2>&1 | sed 's/^/I: /'`,
			srt + ` -d -s ` + inner + ` -c 'echo SECOND-OK' 2>&1 | grep -e SECOND -e 'spare listeners'`,
			srt + ` --control-fd 3 -s ` + inner + ` -c 'for i in $(seq 100); do c=$(curl -s -o /dev/null -w "%{http_code}" --noproxy "" http://b.example.org/); [ "$c" = 502 ] && break; sleep 0.1; done; echo "CONTROL $c"' 3<` + update + ` 2>/dev/null`,
			srt + ` -s ` + inner + ` -c 'touch inner/started; sleep 30' 2>/dev/null & p=$!`,
			`for i in $(seq 100); do [ -e inner/started ] && break; sleep 0.1; done; kill -9 $p; wait $p`,
			srt + ` -s ` + inner + ` -c 'echo AFTER-KILL-OK' 2>&1 | grep AFTER-KILL`,
			srt + ` -s ` + inner + ` -c "` + srt + ` -s ` + inner + ` -c 'echo THIRD-RAN'" 2>&1 | grep -v 'srt: warning' | sed 's/^/T: /'`,
			`cat ` + secret + ` | sed 's/^/OUTER-READ: /'`,
			`python3 ` + grab,
		}, "\n"))...)
		expect(t, r, 0, "I: BOTH 200", "I: INNER-DENIES 403", "I: BOTH-NAME 502", "I: INNER-DENIES-NAME 403", "I: OUTER-DENIES 403",
			"I: SOCKS 200", "I: BYPASS 000", "I: LISTENERS-VAR unset",
			"I: INNER-WRITE-ok", "I: INNER-NARROWER-WRITE-refused", "I: INNER-READ: cat: "+secret+": Permission denied", "!I: INNER-READ: INNER-ONLY",
			"SECOND-OK", "srt: debug: the proxies listen on the spare listeners of the outer srt (SRT_LANDLOCK_LISTENERS): ports ",
			"AFTER-KILL-OK", "CONTROL 502",
			"T: srt: srt cannot listen for its network proxies here: binding a port on 127.0.0.1 is refused (permission denied), as inside the Landlock backend's sandbox of another srt, and SRT_LANDLOCK_LISTENERS is not set",
			"!THIRD-RAN", "OUTER-READ: INNER-ONLY-SECRET", "OWN b'GET'", "!GOT-REPLY")
		if n := strings.Count(r.stdout, "NO-ANSWER"); n != 2 {
			t.Errorf("the outer command's requests on the two spare ports: want two without an answer, got %d:\n%s", n, r)
		}
		if hits.Load() != 0 {
			t.Errorf("ESCAPE: a request sent on a spare port reached the host (%d)", hits.Load())
		}
		var innerViol, outerViol []string
		for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
			if strings.Contains(l, "deny network-outbound") {
				if strings.HasPrefix(l, "I: ") {
					innerViol = append(innerViol, l)
				} else {
					outerViol = append(outerViol, l)
				}
			}
		}
		iv, ov := strings.Join(innerViol, "\n"), strings.Join(outerViol, "\n")
		for _, want := range []string{"b.example.org:80", innerDenies.addr()} {
			if !strings.Contains(iv, want) || strings.Contains(ov, want) {
				t.Errorf("the inner's refusal of %s: want it in the inner's violations only; inner:\n%s\nouter:\n%s", want, iv, ov)
			}
		}
		if !strings.Contains(ov, "inner-only.test:80") || strings.Contains(iv, "inner-only.test") {
			t.Errorf("the outer's refusal of inner-only.test: want it in the outer's violations only; inner:\n%s\nouter:\n%s", iv, ov)
		}
		if !exists(w.path("home/proj/inner/a")) || exists(w.path("home/proj/out/b")) {
			t.Error("the inner's writes: want inner/a written and out/b refused")
		}
	})
}
