package unixgate

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// resolve reaches what the kernel would for the calling thread: here the
// test's own thread stands for the command's, so "/proc/self" and
// /dev/fd name this process either way, and what resolve reaches through
// them must be the file the descriptor holds; a thread other than the
// caller's is then named by its tid, and its descriptors differ when it
// has a table of its own (unshare(CLONE_FILES)).
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "a.sock")
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(l)
	if err := unix.Bind(l, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	opath, err := unix.Open(sock, unix.O_PATH, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(opath)
	os.Symlink("/dev/fd/"+strconv.Itoa(opath), filepath.Join(dir, "via-dev-fd"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	os.Symlink("../"+filepath.Base(dir)+"/a.sock", filepath.Join(dir, "rel"))
	var want unix.Stat_t
	unix.Stat(sock, &want)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	alive := func() bool { return true }
	n := strconv.Itoa(opath)
	for _, c := range []struct {
		path string
		e    unix.Errno
	}{
		{sock, 0},
		{"/dev/fd/" + n, 0},
		{"/proc/self/fd/" + n, 0},
		{"/proc/thread-self/fd/" + n, 0},
		{"/proc/" + strconv.Itoa(tid) + "/fd/" + n, 0},
		{"/proc/self/root" + sock, 0},
		{"/proc/self/cwd/../../../../../../../../../../.." + sock, 0},
		{filepath.Join(dir, "via-dev-fd"), 0},
		{filepath.Join(dir, "rel"), 0},
		{"//dev//fd/./" + n, 0},
		{sock + "/", unix.ENOTDIR},
		{filepath.Join(dir, "loop"), unix.ELOOP},
		{filepath.Join(dir, "missing"), unix.ENOENT},
		{"", unix.ENOENT},
		{"/dev/fd/999999", unix.ENOENT},
	} {
		fd, e := resolve(c.path, tid, alive, false)
		if e != c.e {
			t.Errorf("%q: got %v, want %v", c.path, e, c.e)
		}
		if e != 0 {
			continue
		}
		var st unix.Stat_t
		unix.Fstat(fd, &st)
		unix.Close(fd)
		if st.Dev != want.Dev || st.Ino != want.Ino {
			t.Errorf("%q: reached %d:%d, want the socket %d:%d", c.path, st.Dev, st.Ino, want.Dev, want.Ino)
		}
	}

	// A relative path starts from the thread's working directory.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	fd, e := resolve("a.sock", tid, alive, false)
	if e != 0 {
		t.Fatalf("a relative path: %v", e)
	}
	unix.Close(fd)
	if _, e := resolve("a.sock", tid, func() bool { return false }, false); e != unix.ESRCH {
		t.Errorf("a relative path of a thread gone: got %v, want ESRCH", e)
	}

	// A thread whose table is its own: its descriptor n, not this one's.
	got := make(chan string, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with it
		if err := unix.Unshare(unix.CLONE_FILES); err != nil {
			got <- "unshare: " + err.Error()
			return
		}
		unix.Close(opath) // in its own table only
		_, e := resolve("/dev/fd/"+n, unix.Gettid(), alive, false)
		got <- e.Error()
	}()
	if g := <-got; !strings.Contains(g, "no such file") {
		t.Errorf("/dev/fd/%s of a thread that closed it in its own table: %s, want ENOENT", n, g)
	}
}

// decide: a path beneath a listed directory or a listed file, link count
// 1; a pinned entry, by its path and only its inode.
func TestDecide(t *testing.T) {
	g := &Gate{Allowed: []Entry{
		{Path: "/run/dir"},
		{Path: "/run/a.sock"},
		{Path: "/w/agent.sock", Pinned: true, ID: &FileID{Dev: 7, Ino: 42}},
		{Path: "/w/later.sock", Pinned: true},
	}}
	st := func(dev, ino, nlink uint64) unix.Stat_t { return unix.Stat_t{Dev: dev, Ino: ino, Nlink: nlink} }
	for _, c := range []struct {
		real string
		st   unix.Stat_t
		ok   bool
		why  string
	}{
		{"/run/dir/x.sock", st(1, 2, 1), true, ""},
		{"/run/dir/sub/x.sock", st(1, 2, 1), true, ""},
		{"/run/dir", st(1, 2, 1), true, ""},
		{"/run/dirx/x.sock", st(1, 2, 1), false, ""},
		{"/run/dir/x.sock", st(1, 2, 2), false, "a hard link"},
		{"/run/a.sock", st(1, 3, 1), true, ""},
		{"/w/agent.sock", st(7, 42, 1), true, ""},
		{"/w/agent.sock", st(7, 42, 3), true, ""}, // the pinned file, whatever its other names
		{"/w/agent.sock", st(7, 43, 1), false, "not the socket that was there when the sandbox started"},
		{"/w/agent.sock", st(8, 42, 1), false, "not the socket that was there"},
		// its inode number, freed and given to a new socket file
		{"/w/agent.sock", unix.Stat_t{Dev: 7, Ino: 42, Nlink: 1, Ctim: unix.Timespec{Nsec: 1}}, false, "not the socket that was there"},
		{"/w/agent.sock/x", st(7, 42, 1), false, ""}, // nothing beneath a pinned file
		{"/w/later.sock", st(7, 44, 1), false, "srt found no socket its daemon bound there when the sandbox started"},
		{"socket:[123]", st(0, 123, 1), false, ""},
	} {
		ok, why := g.decide(c.real, c.st)
		if ok != c.ok || c.why == "" && why != "" || !strings.Contains(why, c.why) {
			t.Errorf("%s %+v: got %v %q, want %v %q", c.real, c.st, ok, why, c.ok, c.why)
		}
	}
}

// resolve with ownProc: a magic link of another process (its cwd, root,
// fd/N, and through task/TID) is refused (EACCES), the caller's own
// (/proc/self, /proc/PID of its own, /dev/fd) and a descendant's of the
// process walking followed.
func TestResolveOwnProc(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "a.sock")
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(l)
	if err := unix.Bind(l, &unix.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	alive := func() bool { return true }
	me, other := strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getppid())
	fdn := strconv.Itoa(int(d.Fd()))
	child := exec.Command("sleep", "30")
	child.Dir = dir
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	kid := strconv.Itoa(child.Process.Pid)
	for _, c := range []struct {
		path string
		want unix.Errno
	}{
		{"/proc/self/root" + sock, 0},
		{"/proc/" + me + "/root" + sock, 0},
		{"/proc/thread-self/root" + sock, 0},
		{"/proc/self/fd/" + fdn + "/a.sock", 0},
		{"/dev/fd/" + fdn + "/a.sock", 0},
		{"/proc/" + other + "/root" + sock, unix.EACCES},
		{"/proc/" + other + "/task/" + other + "/root" + sock, unix.EACCES},
		{"/proc/" + other + "/cwd", unix.EACCES},
		{"/proc/" + kid + "/cwd/a.sock", 0}, // a descendant's
	} {
		fd, e := resolve(c.path, tid, alive, true)
		if e == 0 {
			unix.Close(fd)
		}
		if e != c.want {
			t.Errorf("%s: %v, want %v", c.path, e, c.want)
		}
		if fd, e := resolve(c.path, tid, alive, false); e != 0 {
			t.Errorf("%s without ownProc: %v", c.path, e)
		} else {
			unix.Close(fd)
		}
	}
}
