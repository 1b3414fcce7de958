//go:build linux

package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Hostile review of d578f73 (review/llro2): every Unix connect of the
// Landlock backend goes through the Unix socket gate, which, without an
// allowUnixSockets list, allows every path (AllowAll) and connects "with
// the command's credentials". Tests showing an open hole are gated by
// openFinding (SRT_REVIEW_OPEN=1 runs them).

// allUnixSettings: allowAllUnixSockets, the one setting under which the
// command may make a Unix socket and the AllowAll gate decides its
// connects.
const allUnixSettings = `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`

// llro2Client connects to each argument and prints CONNECTED and what
// the server says, or REFUSED and the errno's name; STAT lines say what
// the command's own stat(2) of the path gives.
const llro2Client = `
import socket, sys, os, errno
for p in sys.argv[1:]:
    try:
        os.stat(p); print("STAT", p, "ok")
    except OSError as e:
        print("STAT", p, errno.errorcode.get(e.errno, e.errno))
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(p)
        print("CONNECTED", p, s.recv(100).decode().strip())
    except OSError as e:
        print("REFUSED", p, errno.errorcode.get(e.errno, e.errno))
`

// llro2Serve listens on the Unix socket path (mode 0777) and answers each
// connection with "SECRET-"+tag.
func llro2Serve(t *testing.T, path, tag string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o777)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SECRET-" + tag + "\n"))
			c.Close()
		}
	}()
}

// TestReviewLLRO2UnixDirSearchDeputy: a socket (mode 0777) in a
// directory of mode 0700 owned by another user. The command cannot
// search the directory (root runs without CAP_DAC_READ_SEARCH and
// CAP_DAC_OVERRIDE), so its own connect would fail with EACCES. The
// AllowAll gate resolves the path in the init stage (resolve: O_PATH
// opens with the init stage's credentials, a root caller's capabilities
// all there) and connects, as the command, to /proc/self/fd/N: the magic
// link skips the directory's search permission, and the kernel checks
// write permission on the socket inode alone, which 0777 gives.
// Found (root reached the socket: the session bus in /run/user/UID, an
// agent's socket in a 0700 directory); fixed: the gate resolves the path
// as the command (AsCommand). EACCES, as the command's own connect. And
// a socket of mode 0700, another user's, in an open directory: EACCES
// (the connect itself is the command's: stopped before the fix too).
func TestReviewLLRO2UnixDirSearchDeputy(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		other := 0
		if w.r.uid == 0 {
			other = runners(t)[1].uid
		}
		dir := filepath.Join(w.root, "private")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(dir, other, other)
		sock := filepath.Join(dir, "s")
		llro2Serve(t, sock, "DIR")
		os.Chown(sock, other, other)
		// A socket of mode 0700, another user's, in a directory anyone
		// may search: its write permission is the connect's check.
		closed := filepath.Join(w.root, "closed.sock")
		llro2Serve(t, closed, "MODE")
		os.Chmod(closed, 0o700)
		os.Chown(closed, other, other)
		w.write("client.py", llro2Client)
		r := w.landlock(allUnixSettings, "python3 "+w.path("client.py")+" "+sock+" "+closed)
		if strings.Contains(r.stdout, "SECRET-DIR") || strings.Contains(r.stdout, "SECRET-MODE") {
			t.Errorf("ESCAPE: the command reached a socket it may not\n%s", r)
		}
		expect(t, r, 0, "STAT "+sock+" EACCES", "REFUSED "+sock+" EACCES", "REFUSED "+closed+" EACCES")
	})
}

// TestReviewLLRO2UnixProcRootDeputy: a host process (the runner's own)
// in a mount namespace of its own serves a socket on a tmpfs there, which
// the host's tree does not have. The command may not follow
// /proc/PID/root or /proc/PID/cwd of a process outside its Landlock
// domain (Landlock's ptrace scope: EACCES; for root, also the missing
// CAP_SYS_PTRACE), so its own connect would fail. The AllowAll gate's
// resolve, run by the init stage (outside that domain, with its
// capabilities), followed those magic links (found, root and srt-test);
// fixed: it refuses a magic link of a process outside the caller's
// thread group (EACCES, as the command's own connect).
func TestReviewLLRO2UnixProcRootDeputy(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make the helper's mount namespace")
		}
		mnt, pid := llro2NSHelper(t, w)
		viaRoot := "/proc/" + pid + "/root" + mnt + "/s"
		viaCwd := "/proc/" + pid + "/cwd/s"
		w.write("client.py", llro2Client)
		r := w.landlock(allUnixSettings, "python3 "+w.path("client.py")+" "+viaRoot+" "+viaCwd)
		if strings.Contains(r.stdout, "SECRET-NS") {
			t.Errorf("ESCAPE: the command reached a socket of another mount namespace through /proc/PID/{root,cwd}\n%s", r)
		}
		expect(t, r, 0, "STAT "+viaRoot+" EACCES", "REFUSED "+viaRoot+" EACCES", "REFUSED "+viaCwd+" EACCES")
	})
}

// TestReviewLLRO2InodeIoctlAliases: the inode ioctls refused by number
// (inodeIoctls) have other numbers reaching the same kernel code. A
// file outside the write roots, the runner's own, opened for reading:
//
//   - EXT4_IOC_SETVERSION (_IOW('f', 4, long), 0x40086604), ext4's own
//     name of FS_IOC_SETVERSION, sets the inode's generation (on an ext4
//     without metadata_csum, as this VM's /tmp);
//   - FS_IOC_SETFLAGS with bits above the 32 of ioctl's cmd (the kernel
//     takes an unsigned int);
//   - FS_IOC_SETFLAGS and FS_IOC_SETVERSION themselves (controls).
//
// Found: EXT4_IOC_SETVERSION set the protected file's generation (root
// and srt-test); fixed: refused with the others (inodeIoctls). EPERM for
// each (EXT4_IOC32_SETVERSION is refused too, which native ext4 does
// not know: ENOTTY), the generation and flags unchanged.
func TestReviewLLRO2InodeIoctlAliases(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		f := w.write("home/protected.txt", "keep")
		gen := func() int {
			fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			v, err := unix.IoctlGetInt(fd, 0x80087601) // FS_IOC_GETVERSION
			if err != nil {
				return -1
			}
			return v
		}
		gen0, flags0 := gen(), fsFlags(t, f)
		r := w.landlock(fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`), `python3 -c '
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
fd = os.open("`+f+`", os.O_RDONLY)
def io(name, req, val):
    v = ctypes.c_long(val)
    rv = libc.ioctl(fd, req, ctypes.byref(v))
    print(name, "ok" if rv == 0 else errno.errorcode.get(ctypes.get_errno(), "?"))
io("EXT4-SETVERSION", 0x40086604, 4242)
io("EXT4-32-SETVERSION", 0x40046604, 4243)
io("SETFLAGS-HIGH", 0x100000000 | 0x40086602, 0x80)
io("SETFLAGS", 0x40086602, 0x80)
io("SETVERSION", 0x40087602, 4244)
'`)
		if g := gen(); g != gen0 {
			t.Errorf("ESCAPE: the protected file's generation changed: %d -> %d\n%s", gen0, g, r)
		}
		if fl := fsFlags(t, f); fl != flags0 {
			t.Errorf("ESCAPE: the protected file's flags changed: %#x -> %#x\n%s", flags0, fl, r)
		}
		expect(t, r, 0, "EXT4-SETVERSION EPERM", "EXT4-32-SETVERSION EPERM", "SETFLAGS-HIGH EPERM", "SETFLAGS EPERM", "SETVERSION EPERM")
	})
}

// llro2UnixEdges: Unix connects at the edges of the address, each
// printed as NAME and ok or the errno's name. It makes its sockets in
// its working directory; run on the host and in the sandbox, both must
// print the same (the gate performs every connect, and must answer as
// the kernel would).
const llro2UnixEdges = `
import socket, os, errno, ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
def res(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def raw(s, b):
    buf = ctypes.create_string_buffer(b, len(b))
    if libc.connect(s.fileno(), buf, len(b)) != 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
def un(p): return (1).to_bytes(2, "little") + p
srv = socket.socket(socket.AF_UNIX); srv.bind("srv.sock"); srv.listen(64)
long = "L" * 108
lsrv = socket.socket(socket.AF_UNIX)
raw_bind = lambda s, b: libc.bind(s.fileno(), ctypes.create_string_buffer(b, len(b)), len(b))
print("BIND108", raw_bind(lsrv, un(long.encode())), lsrv.listen(4))
dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); dg.bind("dg.sock")
sp = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); sp.bind("sp.sock"); sp.listen(4)
os.symlink("srv.sock", "link.sock"); os.symlink("loop1", "loop2"); os.symlink("loop2", "loop1")
open("plain", "w").close(); os.mkdir("d")
d = os.open(".", os.O_RDONLY)
S = lambda t=socket.SOCK_STREAM: socket.socket(socket.AF_UNIX, t)
res("RELATIVE", lambda: S().connect("srv.sock"))
res("DOT-SLASH", lambda: S().connect("./d/../srv.sock"))
res("PROC-SELF-CWD", lambda: S().connect("/proc/self/cwd/srv.sock"))
res("PROC-THREAD-SELF-CWD", lambda: S().connect("/proc/thread-self/cwd/srv.sock"))
res("PROC-PID-CWD", lambda: S().connect("/proc/%d/cwd/srv.sock" % os.getpid()))
res("DEV-FD", lambda: S().connect("/dev/fd/%d/srv.sock" % d))
res("SYMLINK", lambda: S().connect("link.sock"))
res("LOOP", lambda: S().connect("loop1"))
res("TRAILING-SLASH", lambda: S().connect("srv.sock/"))
res("NOT-SOCKET", lambda: S().connect("plain"))
res("DIRECTORY", lambda: S().connect("d"))
res("MISSING", lambda: S().connect("missing.sock"))
res("LEN108-NONUL", lambda: raw(S(), un(long.encode())))
res("LEN109", lambda: raw(S(), un(long.encode() + b"\0")))
res("LEN111", lambda: raw(S(), un(long.encode() + b"\0\0\0")))
res("TRAILING-JUNK", lambda: raw(S(), un(b"srv.sock\0junk")))
res("UNNAMED", lambda: raw(S(), un(b"")))
res("SHORT1", lambda: raw(S(), b"\x01"))
res("ZERO-LEN", lambda: libc.connect(S().fileno(), None, 0) == 0 or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
res("FAMILY-INET", lambda: raw(S(), (2).to_bytes(2, "little") + bytes(14)))
res("EMPTY-PATH", lambda: raw(S(), un(b"\0")))
res("SEQPACKET", lambda: S(socket.SOCK_SEQPACKET).connect("sp.sock"))
res("STREAM-TO-DGRAM", lambda: S().connect("dg.sock"))
res("DGRAM-TO-STREAM", lambda: S(socket.SOCK_DGRAM).connect("srv.sock"))
c = S(socket.SOCK_DGRAM)
res("DGRAM", lambda: c.connect("dg.sock"))
res("DGRAM-UNSPEC", lambda: raw(c, bytes(16)))
res("DGRAM-AGAIN", lambda: c.connect("dg.sock"))
a, b = socket.socketpair()
res("PAIR", lambda: a.connect("srv.sock"))
e = S(); e.connect("srv.sock")
res("CONNECTED-AGAIN", lambda: e.connect("srv.sock"))
res("LISTENER", lambda: srv.connect("srv.sock"))
full = socket.socket(socket.AF_UNIX); full.bind("full.sock"); full.listen(0)
nb = []
for i in range(8):
    s = S(); s.setblocking(False); nb.append(s)
    try:
        s.connect("full.sock")
    except OSError as x:
        print("FULL-NONBLOCK", errno.errorcode.get(x.errno)); break
res("NOT-A-SOCKET-FD", lambda: libc.connect(d, None, 0) == 0 or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
res("BAD-FD", lambda: libc.connect(999, ctypes.create_string_buffer(un(b"srv.sock\0")), 11) == 0 or (_ for _ in ()).throw(OSError(ctypes.get_errno(), "")))
`

// TestReviewLLRO2UnixConnectEdges: the gate answers every Unix connect
// (allowAllUnixSockets) as the kernel would: the edge cases of the
// address (relative, through /proc/self, /dev/fd, symlinks and their
// loops, a trailing slash, a 108-byte sun_path without its NUL, too
// long, junk after the NUL, unnamed, too short, another family), of the
// socket (a connected one, a socket pair's end, a listener, datagram
// connect and AF_UNSPEC, seqpacket, the wrong type), a full backlog on a
// non-blocking socket, and descriptors that are no socket. Expected: the
// sandbox prints what the host prints (but the empty abstract name,
// EPERM by design). Stopped: they match.
func TestReviewLLRO2UnixConnectEdges(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("edges.py", llro2UnixEdges)
		hostDir := w.mkdir("home/proj/host")
		cmd := w.hostCmd(nil, "/usr/bin/python3", w.path("edges.py"))
		cmd.Dir = hostDir
		host, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("on the host: %v\n%s", err, host)
		}
		w.mkdir("home/proj/in")
		r := w.landlock(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`,
			"cd in && python3 "+w.path("edges.py"))
		if r.code != 0 {
			t.Fatalf("in the sandbox: %s", r)
		}
		// An abstract name (the empty one too) is refused by design
		// (EPERM, as Landlock's scope), the host's kernel looks it up.
		expect(t, r, 0, "EMPTY-PATH EPERM")
		lines := func(s string) []string {
			var out []string
			for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
				if !strings.HasPrefix(l, "EMPTY-PATH ") {
					out = append(out, l)
				}
			}
			return out
		}
		hl, sl := lines(string(host)), lines(r.stdout)
		if strings.Join(hl, "\n") != strings.Join(sl, "\n") {
			var diff []string
			for i := 0; i < len(hl) || i < len(sl); i++ {
				h, s := "", ""
				if i < len(hl) {
					h = hl[i]
				}
				if i < len(sl) {
					s = sl[i]
				}
				if h != s {
					diff = append(diff, "host: "+h+" | sandbox: "+s)
				}
			}
			t.Errorf("the sandbox's connects differ from the host's:\n%s\n%s", strings.Join(diff, "\n"), r)
		}
	})
}

// TestReviewLLRO2UnderParentFilter: srt started by a process that has a
// seccomp filter of its own already (an allow-all one, as a container's
// default profile or a sandboxed CI runner gives): the command starts
// with that many more filters, which the gate must count as the base
// (baseFilters), not take for filters of the command's own. Expected: the
// allowed loopback destination is reached; 127.0.0.2 on its port is not
// (EACCES); a process of the command that adds a filter of its own is
// refused the allowed destination too (EACCES).
func TestReviewLLRO2UnderParentFilter(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		ok := startTrap(t, "127.0.0.1:0")
		p := itoa(ok.port)
		trap := startTrap(t, "127.0.0.2:"+p)
		cmd := w.command(nil, append(landlockArgs(w), "-s", w.settings(netSettings([]string{"127.0.0.1:" + p}, nil, "")), "-c", `python3 -c '
import socket, ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def status():
    for l in open("/proc/self/status"):
        if l.startswith("Seccomp_filters"): return l.split()[1]
print("FILTERS", status())
def con(name, addr, tag):
    s = socket.socket()
    try:
        s.connect(addr); s.sendall(tag); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
con("ALLOWED", ("127.0.0.1", `+p+`), b"allowed")
con("OTHER", ("127.0.0.2", `+p+`), b"other")
class sock_filter(ctypes.Structure): _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class sock_fprog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(sock_filter))]
allow = (sock_filter * 1)(sock_filter(0x06, 0, 0, 0x7fff0000))
prog = sock_fprog(1, allow)
print("OWN-FILTER", libc.prctl(22, 2, ctypes.byref(prog), 0, 0))
con("ALLOWED-OWN", ("127.0.0.1", `+p+`), b"own")
'`)...)
		wrapper := `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class sock_filter(ctypes.Structure): _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class sock_fprog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(sock_filter))]
allow = (sock_filter * 1)(sock_filter(0x06, 0, 0, 0x7fff0000))
prog = sock_fprog(1, allow)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
os.execv(sys.argv[1], sys.argv[1:])
`
		cmd.Args = append([]string{"/usr/bin/python3", "-c", wrapper, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = "/usr/bin/python3"
		r := w.run(cmd)
		if got := trap.received(); len(got) > 0 {
			t.Errorf("ESCAPE: the trap on 127.0.0.2 received %q\n%s", got, r)
		}
		expect(t, r, 0, "ALLOWED ok", "OTHER EACCES", "OWN-FILTER 0", "ALLOWED-OWN EACCES")
	})
}

// TestReviewLLRO2UnixBlockedConnectSignal: a blocking Unix connect to a
// listener whose backlog is full waits in the gate's goroutine, and the
// command waits for the gate killably only (WAIT_KILLABLE_RECV): a
// signal whose handler should interrupt it (no SA_RESTART: EINTR, what
// alarm(2) timeouts and Python's Ctrl-C rely on) does not, and the
// connect returns only once the listener accepts (here after 3 s, a
// thread of the command's) — or never. Before d578f73 such a connect
// (no allowUnixSockets list) ran as made, interruptible. Not an escape:
// a liveness regression, undocumented. Expected: EINTR after the alarm
// (0.2 s), as on the host.
func TestReviewLLRO2UnixBlockedConnectSignal(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		openFinding(t, "a blocking Unix connect through the gate cannot be interrupted by a signal (EINTR): it waits for the peer")
		w.write("blocked.py", `
import socket, errno, ctypes, signal, time, threading
libc = ctypes.CDLL(None, use_errno=True)
a = (1).to_bytes(2, "little") + b"full.sock\0"
full = socket.socket(socket.AF_UNIX); full.bind("full.sock"); full.listen(0)
fill = []
while True:
    s = socket.socket(socket.AF_UNIX); s.setblocking(False)
    try: s.connect("full.sock"); fill.append(s)
    except OSError as e: print("FILLED", len(fill), errno.errorcode[e.errno]); break
def drain():
    time.sleep(3); full.setblocking(False); end = time.time() + 2
    while time.time() < end:
        try: full.accept()
        except BlockingIOError: time.sleep(0.05)
threading.Thread(target=drain, daemon=True).start()
signal.signal(signal.SIGALRM, lambda *x: None); signal.siginterrupt(signal.SIGALRM, True)
s = socket.socket(socket.AF_UNIX)
signal.setitimer(signal.ITIMER_REAL, 0.2)
t0 = time.time()
rv = libc.connect(s.fileno(), ctypes.create_string_buffer(a, len(a)), len(a))
print("BLOCKING", rv, errno.errorcode.get(ctypes.get_errno(), "-") if rv else "ok", "after %.0f s" % (time.time() - t0))
`)
		w.mkdir("home/proj/in")
		r := w.landlock(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`,
			"cd in && python3 "+w.path("blocked.py"))
		expect(t, r, 0, "FILLED 1 EAGAIN", "BLOCKING -1 EINTR after 0 s")
	})
}

// llro2NSHelper starts a host process, the runner's, in a mount
// namespace of its own, serving "SECRET-NS" on the socket s of a tmpfs
// mounted there at mnt (empty in the host's tree), its working directory.
func llro2NSHelper(t *testing.T, w *workspace) (mnt, pid string) {
	t.Helper()
	mnt = w.mkdir("nsdir")
	script := `import socket, os, sys
s = socket.socket(socket.AF_UNIX); s.bind("s"); os.chmod("s", 0o777); s.listen(8)
print("READY", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"SECRET-NS\n"); c.close()
`
	creds := ""
	if w.r.uid != 0 {
		creds = "setpriv --reuid=" + itoa(w.r.uid) + " --regid=" + itoa(w.r.gid) + " --clear-groups "
	}
	helper := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		"mount -t tmpfs -o mode=0755 none "+mnt+" && cd "+mnt+" && chmod 0777 . && exec "+creds+"/usr/bin/python3 -c '"+script+"'")
	out, _ := helper.StdoutPipe()
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.HasPrefix(line, "READY")
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("helper did not start")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helper did not start in 10 s")
	}
	pid = itoa(helper.Process.Pid)
	if _, err := os.Stat(filepath.Join(mnt, "s")); err == nil {
		t.Fatal("the helper's socket is in the host's tree")
	}
	return mnt, pid
}

// TestReviewLLRO2UnixListProcRoot: the same socket of another mount
// namespace, through /proc/PID/root, under an allowUnixSockets list that
// names the directory where it lies in that namespace (mnt, empty in
// the host's: a user lists a directory of sockets). The list's gate
// decides on the path /proc/self/fd names the inode it reached by — the
// other namespace's mount point, which is the listed directory's path.
// Found (root and srt-test: predates d578f73, the list's gate); fixed:
// the gate refuses /proc's magic links of other processes under the
// Landlock backend (HostNetwork) too. EACCES, as the command's own.
func TestReviewLLRO2UnixListProcRoot(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make the helper's mount namespace")
		}
		mnt, pid := llro2NSHelper(t, w)
		viaRoot := "/proc/" + pid + "/root" + mnt + "/s"
		w.write("client.py", llro2Client)
		r := w.landlock(unixSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`, mnt), "python3 "+w.path("client.py")+" "+viaRoot+" "+mnt+"/s")
		if strings.Contains(r.stdout, "SECRET-NS") {
			t.Errorf("ESCAPE: a listed directory's path let the command reach another mount namespace's socket\n%s", r)
		}
		expect(t, r, 0, "REFUSED "+viaRoot+" EACCES", "REFUSED "+mnt+"/s ENOENT")
	})
}

// TestReviewLLRO2MetaProcRoot: the read-only supervisor's walk
// (unixgate.ResolveAt) follows /proc's magic links as the init stage,
// outside the command's Landlock domain. A host process of the runner's
// in a mount namespace of its own has a tmpfs at nsw, a directory of
// the command's write root (empty in the host's tree), with a file f
// (0644, the runner's). The command may not follow /proc/PID/root
// (Landlock's ptrace scope); the supervisor does, and decides on the
// inode (its directory's parent is the write root, the same inode in
// both namespaces). Found (srt-test: chmod and utime performed on the
// other namespace's file; predates d578f73); fixed: ResolveAt refuses a
// magic link of another process. EACCES, the file unchanged.
func TestReviewLLRO2MetaProcRoot(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make the helper's mount namespace")
		}
		mp := w.mkdir("home/proj/nsw")
		creds := ""
		if w.r.uid != 0 {
			creds = "setpriv --reuid=" + itoa(w.r.uid) + " --regid=" + itoa(w.r.gid) + " --clear-groups "
		}
		helper := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			"mount -t tmpfs -o mode=0755 none "+mp+" && echo keep > "+mp+"/f && chown "+itoa(w.r.uid)+":"+itoa(w.r.gid)+" "+mp+" "+mp+"/f && chmod 0644 "+mp+"/f && exec "+creds+"sleep 60")
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
		pid := itoa(helper.Process.Pid)
		inNS := "/proc/" + pid + "/root" + mp + "/f"
		deadline := time.Now().Add(10 * time.Second)
		for {
			if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && strings.HasPrefix(string(b), "sleep") && exists(inNS) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("helper did not start")
			}
			time.Sleep(50 * time.Millisecond)
		}
		r := w.landlock(fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`), `python3 -c '
import os, errno
p = "`+inNS+`"
for name, f in (("STAT", lambda: os.stat(p)), ("CHMOD", lambda: os.chmod(p, 0o777)), ("UTIME", lambda: os.utime(p, (1, 1))), ("OPEN-W", lambda: os.open(p, os.O_WRONLY | os.O_TRUNC))):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
'`)
		st, err := os.Stat(inNS)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 || st.ModTime().Unix() == 1 || st.Size() != 5 {
			t.Errorf("ESCAPE: the other mount namespace's file changed: %v %v %d\n%s", st.Mode(), st.ModTime(), st.Size(), r)
		}
		expect(t, r, 0, "STAT EACCES", "CHMOD EACCES", "UTIME EACCES", "OPEN-W EACCES")
	})
}
