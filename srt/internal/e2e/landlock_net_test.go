//go:build linux

package e2e

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostTrap is a host listener a command of the Landlock backend must not
// reach: it records every connection and the bytes it brings.
type hostTrap struct {
	ln   net.Listener
	port int
	mu   sync.Mutex
	got  []string
}

func startTrap(t *testing.T, addr string) *hostTrap {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostTrap{ln: ln, port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				b := make([]byte, 256)
				n, _ := c.Read(b)
				h.mu.Lock()
				h.got = append(h.got, c.RemoteAddr().String()+" "+string(b[:n]))
				h.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return h
}

func (h *hostTrap) received() []string {
	time.Sleep(100 * time.Millisecond) // a connection accepted late is still counted
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// TestLandlockNetFastOpen: TCP Fast Open connects without the LSM hook
// Landlock's connect rule is; sendto, sendmsg and sendmmsg with
// MSG_FASTOPEN fail with EOPNOTSUPP (seccomp) and the host listener on a
// port the rules do not allow receives nothing. TCP_FASTOPEN_CONNECT's
// connect goes through the hook (EACCES); the other implicit paths (an
// address on sendmsg without Fast Open, MSG_ZEROCOPY, splice) connect
// nothing, and io_uring is refused.
func TestLandlockNetFastOpen(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		trap := startTrap(t, "127.0.0.1:0")
		p := itoa(trap.port)
		r := w.landlock(fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`), `python3 -c '
import socket, errno, ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
A = ("127.0.0.1", `+p+`)
def res(name, f):
    try:
        print(name, "ok", f())
    except OSError as e:
        print(name, errno.errorcode[e.errno])
res("TFO-SENDTO", lambda: socket.socket().sendto(b"tfo-sendto", socket.MSG_FASTOPEN, A))
res("TFO-SENDMSG", lambda: socket.socket().sendmsg([b"tfo-sendmsg"], [], socket.MSG_FASTOPEN, A))
class iovec(ctypes.Structure): _fields_ = [("base", ctypes.c_char_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure): _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure): _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
sa = ctypes.create_string_buffer(bytes([2, 0]) + (`+p+`).to_bytes(2, "big") + bytes([127, 0, 0, 1]) + bytes(8), 16)
data = b"tfo-sendmmsg"
iov = iovec(data, len(data))
m = mmsghdr(msghdr(ctypes.cast(sa, ctypes.c_void_p), 16, ctypes.pointer(iov), 1, None, 0, 0), 0)
s = socket.socket()
n = libc.sendmmsg(s.fileno(), ctypes.byref(m), 1, socket.MSG_FASTOPEN)
print("TFO-SENDMMSG", n, errno.errorcode.get(ctypes.get_errno(), "-") if n < 0 else "")
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, 30, 1) # TCP_FASTOPEN_CONNECT
res("TFO-CONNECT", lambda: s.connect(A))
res("SENDMSG-NAME", lambda: socket.socket().sendmsg([b"sendmsg-name"], [], 0, A))
res("ZEROCOPY", lambda: socket.socket().sendto(b"zerocopy", 0x4000000, A))
r, wr = os.pipe()
os.write(wr, b"spliced")
sp = socket.socket()
res("SPLICE", lambda: os.splice(r, sp.fileno(), 7))
n = libc.syscall(425, 8, ctypes.create_string_buffer(120))
print("IO_URING", n, errno.errorcode.get(ctypes.get_errno(), "-") if n < 0 else "")
'`)
		// (Python names EOPNOTSUPP, 95, ENOTSUP.)
		expect(t, r, 0, "TFO-SENDTO ENOTSUP", "TFO-SENDMSG ENOTSUP", "TFO-SENDMMSG -1 ENOTSUP",
			"TFO-CONNECT EACCES", "SENDMSG-NAME EPIPE", "ZEROCOPY EPIPE", "SPLICE EPIPE", "IO_URING -1 EPERM")
		if got := trap.received(); len(got) > 0 {
			t.Errorf("ESCAPE: the host listener on a port the rules do not allow received %q", got)
		}
	})
}

// TestLandlockNetListen: listen(2) on a socket without a port would bind
// it to an ephemeral port on every address without Landlock's bind rule;
// the supervisor refuses it (EACCES) and the socket stays unbound. A
// thread swapping that socket onto the number of a Unix socket whose
// listen is in flight gets it listened on never: the supervisor listens
// on the socket it took, not on the number.
func TestLandlockNetListen(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.landlock(fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`), `python3 -c '
import socket, errno, os, threading, ctypes
s = socket.socket()
try:
    s.listen(5); print("LISTEN ok")
except OSError as e:
    print("LISTEN", errno.errorcode[e.errno])
print("PORT", s.getsockname()[1])
s6 = socket.socket(socket.AF_INET6)
try:
    s6.listen(5); print("LISTEN6 ok")
except OSError as e:
    print("LISTEN6", errno.errorcode[e.errno])
u = socket.socket()
a, b = socket.socketpair()
n = os.dup(a.fileno())
stop = False
def swap():
    while not stop:
        os.dup2(u.fileno(), n)
        os.dup2(a.fileno(), n)
t = threading.Thread(target=swap); t.start()
libc = ctypes.CDLL(None)
for i in range(3000):
    libc.listen(n, 5)
stop = True; t.join()
print("RACE-PORT", u.getsockname()[1])
'`)
		expect(t, r, 0, "LISTEN EACCES", "PORT 0", "LISTEN6 EACCES", "RACE-PORT 0")
	})
}

// TestLandlockNetConnectAddress: Landlock's rules know ports, not
// addresses; the supervisor connects only to the destinations themselves
// (here allowedDomains' 127.0.0.1:P and the proxies on 127.0.0.1 and
// ::1). The same port on 127.0.0.2, where a host listener waits, and the
// proxy's port on 127.0.0.2 are refused (EACCES, nothing reached), as are
// their IPv4-mapped forms; the allowed destination is reached, also as
// ::ffff:127.0.0.1. A thread rewriting the address during connect reaches
// the other listener never: the supervisor connects to the copy it
// checked.
func TestLandlockNetConnectAddress(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		ok := startTrap(t, "127.0.0.1:0")
		p := itoa(ok.port)
		trap := startTrap(t, "127.0.0.2:"+p)
		r := w.landlock(netSettings([]string{"127.0.0.1:" + p}, nil, ""), `python3 -c '
import socket, errno, os, threading, ctypes
def res(name, fam, addr):
    s = socket.socket(fam)
    try:
        s.connect(addr); s.sendall(name.encode()); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
    s.close()
P = `+p+`
proxy = int(os.environ["HTTP_PROXY"].rstrip("/").rsplit(":", 1)[1])
res("ALLOWED", socket.AF_INET, ("127.0.0.1", P))
res("ALLOWED-MAPPED", socket.AF_INET6, ("::ffff:127.0.0.1", P))
res("OTHER-LOOPBACK", socket.AF_INET, ("127.0.0.2", P))
res("OTHER-MAPPED", socket.AF_INET6, ("::ffff:127.0.0.2", P))
res("PROXY-OTHER", socket.AF_INET, ("127.0.0.2", proxy))
res("PROXY-REMOTE", socket.AF_INET6, ("::ffff:192.0.2.1", proxy))
res("PROXY", socket.AF_INET, ("127.0.0.1", proxy))
res("PROXY6", socket.AF_INET6, ("::1", proxy))
libc = ctypes.CDLL(None, use_errno=True)
good = bytes([2, 0]) + P.to_bytes(2, "big") + bytes([127, 0, 0, 1]) + bytes(8)
bad = bytes([2, 0]) + P.to_bytes(2, "big") + bytes([127, 0, 0, 2]) + bytes(8)
buf = ctypes.create_string_buffer(good, 16)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, bad, 16)
        ctypes.memmove(buf, good, 16)
t = threading.Thread(target=flip); t.start()
oks = 0
for i in range(300):
    s = socket.socket()
    if libc.connect(s.fileno(), buf, 16) == 0:
        oks += 1
    s.close()
stop = True; t.join()
print("RACE-CONNECTED", oks > 0)
'`)
		expect(t, r, 0, "ALLOWED ok", "ALLOWED-MAPPED ok", "OTHER-LOOPBACK EACCES", "OTHER-MAPPED EACCES",
			"PROXY-OTHER EACCES", "PROXY-REMOTE EACCES", "PROXY ok", "PROXY6 ok", "RACE-CONNECTED True")
		if got := trap.received(); len(got) > 0 {
			t.Errorf("ESCAPE: the host listener on 127.0.0.2:%s received %q", p, got)
		}
		if got := ok.received(); !strings.Contains(strings.Join(got, "\n"), "ALLOWED-MAPPED") {
			t.Errorf("the allowed destination received %q", got)
		}
	})
}
