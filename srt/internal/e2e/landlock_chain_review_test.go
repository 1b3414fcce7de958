//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A hostile review of the Landlock backend's chain supervisor
// (initstage/chain_*.go): calls it must not perform, or must perform as
// the kernel would, each tried from inside at the top of a git checkout.

// chainHostileProbe prints one line per attempt: the name and "ok", a
// value, or the errno's name.
const chainHostileProbe = `
import ctypes, errno, mmap, os, stat, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def t(name, f):
    try:
        r = f(); print(name, "ok" if r is None else r, flush=True)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno), flush=True)
def create(p, mode=0o644):
    os.close(os.open(p, os.O_WRONLY|os.O_CREAT, mode))
def sys_(nr, *a):
    r = libc.syscall(nr, *a)
    if r < 0:
        raise OSError(ctypes.get_errno(), "")
    return r

# Modes: the kernel's mkdir keeps no set-id bit; the supervisor, which
# gives back the bits srt's own umask took, must not either.
os.umask(0)
t("mkdir-setid-umask0", lambda: (os.mkdir("sgd", 0o6777), oct(os.stat("sgd").st_mode & 0o7777))[-1])
t("mknod-fifo-umask0", lambda: (os.mknod("fifo", 0o666|stat.S_IFIFO), oct(os.stat("fifo").st_mode & 0o7777))[-1])
os.umask(0o022)
t("open-setuid", lambda: create("suid", 0o4755))
t("mknod-reg-setuid", lambda: os.mknod("suidnod", 0o4755|stat.S_IFREG))
t("mknod-chr-null", lambda: os.mknod("nulldev", 0o666|stat.S_IFCHR, os.makedev(1, 3)))
t("mknod-blk", lambda: os.mknod("blkdev", 0o666|stat.S_IFBLK, os.makedev(7, 0)))
t("mknod-sock", lambda: os.mknod("sock", 0o644|stat.S_IFSOCK))
t("mknod-hooks-fifo", lambda: os.mknod(".git/hooks/pre-commit", 0o755|stat.S_IFIFO))
t("otmpfile-top", lambda: os.open(".", os.O_TMPFILE|os.O_WRONLY, 0o644))
def tmp_link_config():
    fd = os.open(os.environ["TMPDIR"], os.O_TMPFILE|os.O_WRONLY, 0o755)
    os.write(fd, b"evil")
    os.link("/proc/self/fd/%d" % fd, ".git/hooks/post-commit", follow_symlinks=True)
t("otmpfile-link-hooks", tmp_link_config)
def whiteout_bashrc():
    create("wsrc")
    if libc.renameat2(-100, b".bashrc", -100, b"wdst", 4) != 0:
        raise OSError(ctypes.get_errno(), "")
t("whiteout-bashrc", whiteout_bashrc)
def exchange_config():
    create("xchg")
    if libc.renameat2(-100, b"xchg", -100, b".git/config", 2) != 0:
        raise OSError(ctypes.get_errno(), "")
t("exchange-config", exchange_config)
t("dotdot-hooks", lambda: (os.mkdir("dd"), create("dd/../dd/../.git/hooks/dotdot", 0o755))[-1])
t("long-path-hooks", lambda: create("/".join(["."] * 2000) + "/.git/hooks/longp", 0o755))
t("rename-parent-away", lambda: (os.makedirs("pa/b"), os.rename("pa", ".git/hooks/pa"))[-1])
srt = os.getppid()
while open("/proc/%d/comm" % srt).read().strip() != "srt":
    srt = int([l.split()[1] for l in open("/proc/%d/status" % srt) if l.startswith("PPid:")][0])
t("proc-srt-cwd-hooks", lambda: create("/proc/%d/cwd/.git/hooks/viasrt" % srt, 0o755))
t("proc-srt-cwd-config", lambda: os.close(os.open("/proc/%d/cwd/.git/config" % srt, os.O_WRONLY|os.O_APPEND)))
t("pidfd-getfd-srt", lambda: sys_(438, sys_(434, srt, 0), 0, 0))
t("openat2", lambda: sys_(437, -100, b"o2", ctypes.create_string_buffer(24), 24))
t("io-uring", lambda: sys_(425, 4, ctypes.create_string_buffer(120)))
if os.uname().machine == "x86_64":
    # x32: mkdir with the x32 bit.
    t("x32-mkdir", lambda: sys_(0x40000000 | 83, b".git/hooks/x32", 0o755))
if os.uname().machine == "x86_64" and os.environ.get("INT80") == "1":
    # i386: int 0x80 mkdir (39) of a path below 4 GiB.
    MAP_32BIT = 0x40
    page = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS|MAP_32BIT, prot=mmap.PROT_READ|mmap.PROT_WRITE|mmap.PROT_EXEC)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    path = b".git/hooks/int80\0"
    page[2048:2048+len(path)] = path
    code = b"\xb8\x27\x00\x00\x00" + b"\xbb" + (addr + 2048).to_bytes(4, "little") + b"\xb9\xed\x01\x00\x00" + b"\xcd\x80\xc3"
    page[0:len(code)] = code
    f = ctypes.CFUNCTYPE(ctypes.c_int)(addr)
    t("int80-mkdir", lambda: errno.errorcode.get(-f(), f()))
# The path rewritten by another thread while the call waits for the
# supervisor: what it read once is what it does.
buf = ctypes.create_string_buffer(64)
good, bad = b"flipok\0", b".git/hooks/flip\0"
stop = False
def flipper():
    while not stop:
        ctypes.memmove(buf, bad, len(bad)); ctypes.memmove(buf, good, len(good))
th = threading.Thread(target=flipper); th.start()
for i in range(2000):
    fd = libc.open(buf, os.O_WRONLY|os.O_CREAT, 0o755)
    if fd >= 0: libc.close(fd)
stop = True; th.join()
print("flip-done ok")
`

// TestLandlockChainHostile: set-id bits, devices, whiteouts, O_TMPFILE
// with linkat (Landlock refuses the link with EXDEV), RENAME_EXCHANGE, "..", long paths, srt's own /proc entries
// and descriptors, openat2, io_uring, the x32 and i386 ABIs and a path
// rewritten mid-call: none writes beneath .git or over a mandatory name,
// and the modes are the kernel's.
func TestLandlockChainHostile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		config, _ := os.ReadFile(filepath.Join(w.dir, ".git/config"))
		probe := w.write("home/probe.py", chainHostileProbe)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		i386 := hostInt80(t)
		r := w.landlock(s, "INT80="+map[bool]string{true: "1", false: "0"}[i386]+" python3 "+probe)
		want := map[string]string{
			"mkdir-setid-umask0": "0o777", "mknod-fifo-umask0": "0o666",
			"open-setuid": "EPERM", "mknod-reg-setuid": "EPERM", "mknod-chr-null": "EPERM", "mknod-blk": "EPERM",
			"mknod-sock": "ok", "mknod-hooks-fifo": "EROFS", "otmpfile-top": "EACCES",
			"otmpfile-link-hooks": "EXDEV", "whiteout-bashrc": "EROFS", "exchange-config": "EROFS",
			"dotdot-hooks": "EROFS", "long-path-hooks": "EROFS", "rename-parent-away": "EROFS",
			"proc-srt-cwd-hooks": "EACCES", "proc-srt-cwd-config": "EACCES", "pidfd-getfd-srt": "EPERM",
			"openat2": "ENOSYS", "io-uring": "EPERM", "flip-done": "ok",
		}
		if runtime.GOARCH == "amd64" {
			want["x32-mkdir"] = "ENOSYS"
			if i386 {
				want["int80-mkdir"] = "ENOSYS"
			}
		}
		// srt's own /proc entries: srt is outside the command's Landlock
		// domain, so the supervisors refuse its magic links (EACCES, as
		// Landlock's ptrace scope; before review/llro2 they followed
		// them for a user's command and answered EROFS).
		wantSteps(t, r.stdout, want)
		if t.Failed() {
			t.Logf("%s", r)
		}
		hooks, _ := os.ReadDir(filepath.Join(w.dir, ".git/hooks"))
		for _, h := range hooks {
			if !strings.HasSuffix(h.Name(), ".sample") {
				t.Errorf("ESCAPE: .git/hooks/%s was made", h.Name())
			}
		}
		if b, _ := os.ReadFile(filepath.Join(w.dir, ".git/config")); string(b) != string(config) {
			t.Errorf("ESCAPE: .git/config holds %q", b)
		}
		if exists(filepath.Join(w.dir, "wdst")) || exists(filepath.Join(w.dir, "nulldev")) || exists(filepath.Join(w.dir, "blkdev")) {
			t.Error("ESCAPE: .bashrc was moved, or a device made")
		}
	})
}

// TestLandlockChainKilledFIFOOpen: an open of a FIFO waits for the other
// end, on a thread of the init stage's supervisor. A command that kills
// the opener while it waits must not leave that thread behind: 60 killed
// openers leave the init stage's thread count where it was (unfixed, each
// left one, and some 10 000 crashed the init stage: Go's thread limit,
// every supervised call then failing with ENOSYS).
func TestLandlockChainKilledFIFOOpen(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		probe := w.write("home/fifo.py", `
import os, signal, time
def status(p, key):
    return [l.split()[1] for l in open("/proc/%d/status" % p) if l.startswith(key + ":")][0]
init = os.getpid()
while open("/proc/%d/comm" % init).read().strip() != "srt-init":
    init = int(status(init, "PPid"))
os.mkfifo("ff")
before = int(status(init, "Threads"))
for i in range(60):
    pid = os.fork()
    if pid == 0:
        try: os.open("ff", os.O_WRONLY)
        finally: os._exit(0)
    time.sleep(0.03)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
time.sleep(1)
print("LEFT", int(status(init, "Threads")) - before)
r = os.open("ff", os.O_RDONLY|os.O_NONBLOCK)
pid = os.fork()
if pid == 0:
    fd = os.open("ff", os.O_WRONLY); os.write(fd, b"through"); os._exit(0)
os.waitpid(pid, 0)
print("READ", os.read(r, 100).decode())
`)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, "python3 "+probe)
		expect(t, r, 0, "READ through")
		var left int
		for _, l := range strings.Split(r.stdout, "\n") {
			if v, ok := strings.CutPrefix(l, "LEFT "); ok {
				if n, err := strconv.Atoi(v); err == nil {
					left = n
				} else {
					left = 1000
				}
			}
		}
		if left > 10 {
			t.Fatalf("the init stage kept %d more threads after 60 killed FIFO opens:\n%s", left, r)
		}
	})
}

// TestLandlockChainOtherUsersDir: the supervisor acts with the command's
// own credentials: a chain directory in allowWrite that another user owns
// (mode 0755) refuses a new entry, a removal and a rename, for root (no
// capability) and for the unprivileged user alike.
func TestLandlockChainOtherUsersDir(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		other := 0
		if w.r.uid == 0 {
			other = 65534
		}
		shared := w.mkdir("shared")
		w.gitOnHostOK(shared, "init", "-q")
		os.WriteFile(filepath.Join(shared, "theirs"), []byte("theirs"), 0o644)
		filepath.Walk(shared, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, other, other) })
		os.Chmod(shared, 0o755)
		s := fsSettings(`{"allowWrite":[".","` + shared + `"],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, `cd `+shared+` && { touch mine 2>/dev/null || echo TOUCH-refused; mkdir md 2>/dev/null || echo MKDIR-refused; rm -f theirs 2>/dev/null || echo RM-refused; mv theirs t2 2>/dev/null || echo MV-refused; ln -s x sl 2>/dev/null || echo LN-refused; }`)
		expect(t, r, 0, "TOUCH-refused", "MKDIR-refused", "RM-refused", "MV-refused", "LN-refused")
		for _, p := range []string{"mine", "md", "t2", "sl"} {
			if exists(filepath.Join(shared, p)) {
				t.Errorf("ESCAPE: %s was made in another user's directory", p)
			}
		}
		if !exists(filepath.Join(shared, "theirs")) {
			t.Error("ESCAPE: another user's file was removed")
		}
	})
}

// TestLandlockChainSymlinkedProtectedName: a mandatory name that is a
// symlink (a dotfiles-managed .bashrc, .claude -> elsewhere) at the top
// of the working directory. bubblewrap cannot keep the link itself (a
// mount cannot cover a symlink; docs/security.md, "What srt does not
// protect"), but the Landlock backend's supervisor decides by name: it
// must refuse to remove or replace the link, and a file made in its
// place.
func TestLandlockChainSymlinkedProtectedName(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.write("home/dot/bashrc", "real")
		w.mkdir("home/dot/claude")
		for name, target := range map[string]string{".bashrc": "../dot/bashrc", ".claude": "../dot/claude"} {
			p := filepath.Join(w.dir, name)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			w.chown(p)
		}
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, `rm .bashrc 2>/dev/null || echo RM-refused; mv .claude c2 2>/dev/null || echo MV-refused; rm -f .claude; mkdir .claude; echo evil > .claude/settings.json; echo evil > .bashrc; true`)
		expect(t, r, 0, "RM-refused", "MV-refused")
		for _, name := range []string{".bashrc", ".claude"} {
			if fi, err := os.Lstat(filepath.Join(w.dir, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("ESCAPE: %s is no longer the symlink (%v)", name, err)
			}
		}
		if b, _ := os.ReadFile(w.path("home/dot/bashrc")); string(b) != "real" {
			t.Errorf("ESCAPE: the .bashrc link's target holds %q", b)
		}
	})
}

// TestLandlockChainReadsHostile: with a hidden directory and a hidden
// file beneath the working directory (a chain of the reads the command
// may write), symlinks from a new directory to "..", to the working
// directory, to the hidden paths (one link through another), renames
// into and out of the hidden directory, /proc/self/cwd and a descriptor's
// ".." neither list the working directory nor read a hidden file.
func TestLandlockChainReadsHostile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.write("home/proj/secrets/key", "TOPSECRET")
		w.write("home/proj/.env", "ENVSECRET")
		probe := w.write("home/reads.py", `
import os, errno
def t(name, f):
    try:
        r = f(); print(name, "ok" if r is None else r)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def read(p):
    with open(p) as f: return f.read().strip()
t("ls-cwd", lambda: os.listdir("."))
t("ls-secrets", lambda: os.listdir("secrets"))
t("read-key", lambda: read("secrets/key"))
os.mkdir("nd")
t("sym-dotdot", lambda: (os.symlink("..", "nd/up"), os.listdir("nd/up"))[-1])
t("sym-abs-cwd", lambda: (os.symlink(os.getcwd(), "nd/abs"), os.listdir("nd/abs"))[-1])
t("sym-secrets", lambda: (os.symlink("../secrets", "nd/sec"), os.listdir("nd/sec"))[-1])
t("sym-key", lambda: (os.symlink("../secrets/key", "nd/k"), read("nd/k"))[-1])
t("sym-env-chain", lambda: (os.symlink("k2", "nd/k1"), os.symlink("../.env", "nd/k2"), read("nd/k1"))[-1])
t("rename-secrets", lambda: os.rename("secrets", "nd/s"))
t("mv-nd-into-secrets", lambda: os.rename("nd", "secrets/nd"))
t("proc-cwd-list", lambda: os.listdir("/proc/self/cwd"))
fd = os.open("nd", os.O_RDONLY|os.O_DIRECTORY)
t("dirfd-dotdot-env", lambda: os.read(os.open("../.env", os.O_RDONLY, dir_fd=fd), 100))
t("dirfd-dotdot-list", lambda: os.listdir(os.open("..", os.O_RDONLY|os.O_DIRECTORY, dir_fd=fd)))
t("rdwr-env", lambda: os.open(".env", os.O_RDWR))
t("trunc-new", lambda: (open("tn", "w").write("abc"), os.close(os.open("tn", os.O_RDONLY|os.O_TRUNC)), os.stat("tn").st_size)[-1])
`)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":["` + w.path("home/proj/secrets") + `","` + w.path("home/proj/.env") + `"]}`)
		r := w.landlock(s, "python3 "+probe)
		got := stepLines(r.stdout)
		for _, k := range []string{"ls-cwd", "ls-secrets", "read-key", "sym-dotdot", "sym-abs-cwd", "sym-secrets", "sym-key",
			"sym-env-chain", "proc-cwd-list", "dirfd-dotdot-env", "dirfd-dotdot-list"} {
			if got[k] != "EACCES" {
				t.Errorf("%s: got %q, want EACCES", k, got[k])
			}
		}
		// Writes the rules refuse: the read-only supervisor's EROFS.
		for _, k := range []string{"rename-secrets", "mv-nd-into-secrets", "rdwr-env"} {
			if got[k] != "EROFS" {
				t.Errorf("%s: got %q, want EROFS", k, got[k])
			}
		}
		if got["trunc-new"] != "0" {
			t.Errorf("trunc-new: got %q, want 0", got["trunc-new"])
		}
		if strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "secrets'") {
			t.Errorf("ESCAPE: a hidden path was read or listed:\n%s", r.stdout)
		}
		if t.Failed() {
			t.Logf("%s", r)
		}
		if !exists(w.path("home/proj/secrets/key")) || exists(w.path("home/proj/secrets/nd")) {
			t.Error("ESCAPE: the hidden directory was changed")
		}
	})
}
