//go:build linux

package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
)

// countingUnix listens on a Unix socket of the host (stream or datagram),
// reachable by the runner, and counts the connections it accepts or the
// datagrams it receives.
func countingUnix(t *testing.T, path string, dgram bool) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	if dgram {
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 100)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
				n.Add(1)
			}
		}()
	} else {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Write([]byte(filepath.Base(path) + "\n"))
				c.Close()
			}
		}()
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	return &n
}

// addrRace connects (and sends datagrams) 300 times each through one
// struct sockaddr_un in its memory, while another thread keeps rewriting
// the path in it between the allowed socket's and the denied one's (the
// same length, one byte apart), and prints what came of it. The connects
// are made by a thread other than the process's first.
const addrRace = `
import ctypes, errno, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
a, b, ad, bd = [p.encode() for p in sys.argv[1:5]]
assert len(a) == len(b) and len(ad) == len(bd)
def sockaddr(p):
    return ctypes.create_string_buffer(b"\x01\x00" + p + b"\x00", 110)
stop = False
def flip(buf, x, y):
    i = 0
    while not stop:
        p = x if i % 2 else y
        ctypes.memmove(ctypes.addressof(buf) + 2, p, len(p)); i += 1
def run(kind, x, y, attempt):
    global stop
    stop = False
    buf = sockaddr(x)
    t = threading.Thread(target=flip, args=(buf, x, y)); t.start()
    ok = refused = other = 0
    for _ in range(300):
        r = attempt(buf, 2 + len(x) + 1)
        if r == 0: ok += 1
        elif r == errno.EACCES: refused += 1
        else: other += 1; print(kind, "errno", r)
    stop = True; t.join()
    print(kind, "ok=%d refused=%d other=%d" % (ok, refused, other), flush=True)
def connect(buf, n):
    s = socket.socket(socket.AF_UNIX)
    try:
        if libc.connect(s.fileno(), buf, n) != 0:
            return ctypes.get_errno()
        got = s.recv(100).decode()
        if "b.sock" in got: print("REACHED-DENIED", got.strip())
        return 0
    finally:
        s.close()
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def sendto(buf, n):
    if libc.sendto(d.fileno(), b"x", 1, 0, buf, n) != 1:
        return ctypes.get_errno()
    return 0
# connect from a thread other than the first, sendto from the first
t = threading.Thread(target=run, args=("connect", a, b, connect)); t.start(); t.join()
run("sendto", ad, bd, sendto)
`

// TestUnixSocketsAddressRace: the address a command passes is in its own
// memory, which another of its threads may rewrite while the call waits
// for the supervisor. The init stage reads it once and connects (or
// sends) to what it decided on, so a rewrite to a denied socket's path
// either is what the decision saw (EACCES) or comes too late (the allowed
// socket): the denied servers never see a connection or a datagram,
// whichever way each of 300 races goes.
func TestUnixSocketsAddressRace(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := filepath.Join(socks, "a.sock"), filepath.Join(socks, "b.sock")
		ad, bd := filepath.Join(socks, "c.dgram"), filepath.Join(socks, "d.dgram")
		na, nb := countingUnix(t, a, false), countingUnix(t, b, false)
		nad, nbd := countingUnix(t, ad, true), countingUnix(t, bd, true)
		w.write("home/proj/race.py", addrRace)
		r := w.srt("-s", w.settings(unixSettings(writeCwd, a, ad)), "-c", "python3 race.py "+a+" "+b+" "+ad+" "+bd)
		expect(t, r, 0, "!REACHED-DENIED", "!errno")
		counts := map[string][3]int{}
		for _, m := range regexp.MustCompile(`(connect|sendto) ok=(\d+) refused=(\d+) other=(\d+)`).FindAllStringSubmatch(r.stdout, -1) {
			var c [3]int
			for i := range c {
				c[i], _ = strconv.Atoi(m[2+i])
			}
			counts[m[1]] = c
		}
		for _, kind := range []string{"connect", "sendto"} {
			c, ok := counts[kind]
			// Both outcomes happened: the rewrites did race the reads.
			if !ok || c[0] == 0 || c[1] == 0 || c[2] != 0 {
				t.Fatalf("%s: want some allowed, some refused, nothing else; got %v\n%s", kind, c, r)
			}
		}
		waitFor(t, func() bool {
			return na.Load() == int64(counts["connect"][0]) && nad.Load() == int64(counts["sendto"][0])
		}, "the allowed servers to count what the command says reached them")
		if nb.Load() != 0 || nbd.Load() != 0 {
			t.Fatalf("the denied sockets were reached: %d connections, %d datagrams", nb.Load(), nbd.Load())
		}
		t.Logf("connect %v, sendto %v (allowed, refused, other)", counts["connect"], counts["sendto"])
	})
}
