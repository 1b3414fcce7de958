//go:build linux

package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnixSocketsNetworkUnderSupervision: with network.allowUnixSockets
// every connect, sendto, sendmsg and sendmmsg of the command, of any
// family, is performed by the init stage (docs/settings.md). The network
// still works through it, decided as without it: curl through srt-proxy
// (HTTP_PROXY, a CONNECT tunnel, SOCKS5) with the decider, a refusal
// there, curl and a raw socket ignoring the proxy (captured) to an allowed
// loopback server, the sandbox's name server by dig (UDP) and by glibc
// (A and AAAA at once, sendmmsg) — while, in the same run, a Unix connect
// to an unlisted host socket is refused, so the supervisor is on. dig and
// the last Unix connect call from a thread other than the process's first.
func TestUnixSocketsNetworkUnderSupervision(t *testing.T) {
	skipOnLandlock(t)
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		w.startUnixServer("s="+a, "s="+b)
		w.write("home/proj/client.py", unixClient)
		list, _ := json.Marshal([]string{a})
		s := `{"network":{"allowedDomains":["` + up.addr() + `"],"deniedDomains":[],"allowUnixSockets":` + string(list) + `},"filesystem":` + writeCwd + `}`
		r := w.srt("-s", w.settings(s), "-c",
			"curl -sS --noproxy '' http://"+up.addr()+"/proxied | head -1; "+
				"curl -sS --noproxy '' -p http://"+up.addr()+"/tunnel | head -1; "+
				"curl -sS --noproxy '' -x \"$FTP_PROXY\" http://"+up.addr()+"/socks | head -1; "+
				"echo refused=$(curl -s -o /dev/null -w '%{http_code}' --noproxy '' http://127.0.0.1:1/); "+
				"curl -sS --noproxy '*' http://"+up.addr()+"/captured | head -1; "+
				rawGet("AF_INET", "127.0.0.1", up.port, "/raw")+"; "+
				"echo dig=$(dig +short +time=2 +tries=1 @127.0.0.53 name.test A); "+
				"echo getent=$(getent ahosts name.test | head -1); "+
				"python3 client.py c="+a+" c="+b+"; "+
				// a thread other than the first: the notification names it
				"python3 -c 'import socket, sys, threading\n"+
				"def f():\n s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"THREAD\", s.recv(100).decode().strip())\n"+
				"t = threading.Thread(target=f); t.start(); t.join()' "+a)
		expect(t, r, 0,
			"upstream saw GET /proxied host="+up.addr(),
			"upstream saw GET /tunnel host="+up.addr(),
			"upstream saw GET /socks host="+up.addr(),
			"refused=403",
			"upstream saw GET /captured host="+up.addr(),
			"answer: upstream saw GET /raw host=raw",
			"dig=198.18.128.", "getent=",
			"CONNECTED hello from "+a, "THREAD hello from "+a,
			"REFUSED "+b+" PermissionError 13")
		if !strings.Contains(r.stdout, "getent=198.18.128.") && !strings.Contains(r.stdout, "getent=fd00:5253:0:1::") {
			t.Fatalf("glibc's lookup got no address from the sandbox's name server:\n%s", r)
		}
	})
}
