package initstage

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/unixgate"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// How the chain supervisor (chain_linux.go) reads a call and opens what it
// names, as the command would, with the command's credentials.

// rawPath reads a path argument; ok is false for one that cannot be read
// or is empty.
func rawPath(r *usernotif.Request, arg int) (string, bool) {
	raw, err := r.ReadString(r.Args[arg], maxPath)
	if err != nil || len(raw) == 0 {
		return "", false
	}
	return string(raw), true
}

// base opens what a relative path of r starts from: the directory
// descriptor in argument dirfd of the calling thread, or its working
// directory (dirfd -1, or AT_FDCWD). -1 when the path is absolute.
func base(r *usernotif.Request, dirfd int, path string) (int, bool) {
	if strings.HasPrefix(path, "/") {
		return unix.AT_FDCWD, true
	}
	if dirfd >= 0 {
		if fd := int32(r.Args[dirfd]); fd != unix.AT_FDCWD {
			if fd < 0 {
				return -1, false
			}
			got, err := r.FD(int(fd))
			return got, err == nil
		}
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(r.Pid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	if !r.Valid() { // the thread's, not a process's that took its number
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// split cuts path into its directory and final name, and says whether it
// ended in "/". ok is false for a final name of "." or "..", or none.
func split(path string) (dir, name string, slash, ok bool) {
	trimmed := strings.TrimRight(path, "/")
	slash = len(trimmed) != len(path)
	if trimmed == "" {
		return "", "", slash, false
	}
	dir, name = ".", trimmed
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
		dir, name = trimmed[:i], trimmed[i+1:]
		if dir == "" {
			dir = "/"
		}
	}
	if name == "." || name == ".." {
		return "", "", slash, false
	}
	return dir, name, slash, true
}

// open opens the directory of path (from base, the directory the path
// of thread tid starts from) as the kernel would resolve it for the
// thread (unixgate.ResolveAt: symlinks followed, /proc/self and /dev/fd
// the thread's), and classifies the directory reached for writes, and
// with reads for reads too. Made with the command's credentials
// (asCommand): a directory it could not search is not opened.
func (c *chainSet) open(base int, path string, tid int, near, reads bool) (*entry, bool) {
	dir, name, slash, ok := split(path)
	if !ok {
		return nil, false
	}
	fd, e := unixgate.ResolveAt(base, dir, tid)
	if e != 0 {
		return nil, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return nil, false
	}
	d := &entry{dir: fd, name: name, slash: slash}
	d.cls, d.chain = c.w.classify(fd, near)
	if reads {
		// A chain directory of the reads is one of the writes too (a
		// hidden path is write-protected): near holds for both.
		d.rcls, d.rchain = c.r.classify(fd, near)
	}
	return d, true
}

// maxLinks is the kernel's bound on the symlinks one open follows.
const maxLinks = 40

// asCommand runs f with the command's credentials: a thread of the init
// stage that holds capabilities (a root caller's: the command's thread
// dropped them) drops them from its effective set while f runs. It
// reports false, without running f, if it could not.
func asCommand(f func()) bool {
	runtime.LockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data, saved [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		runtime.UnlockOSThread()
		return false
	}
	if data[0].Effective|data[1].Effective == 0 {
		f()
		runtime.UnlockOSThread()
		return true
	}
	saved = data
	data[0].Effective, data[1].Effective = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		runtime.UnlockOSThread()
		return false
	}
	f()
	if unix.Capset(&hdr, &saved[0]) == nil {
		runtime.UnlockOSThread()
	}
	// else the thread stays locked, and ends with its goroutine.
	return true
}

// umaskOf reads the umask of thread tid.
func umaskOf(r *usernotif.Request) (uint32, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(r.Pid) + "/status")
	if err != nil || !r.Valid() {
		return 0, false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			return uint32(m), err == nil && m <= 0o777
		}
	}
	return 0, false
}
