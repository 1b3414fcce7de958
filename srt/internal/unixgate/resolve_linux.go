package unixgate

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks is how many symlinks one lookup follows (the kernel's
// MAXSYMLINKS) before it fails with ELOOP.
const maxLinks = 40

// resolve opens path (O_PATH) as the kernel resolves it for thread tid,
// whose working directory a relative path starts from: component by
// component, symlinks followed. The one difference a walk of the init
// stage's own would make is procfs's "self" and "thread-self", which name
// whoever looks: wherever the walk meets them in a procfs directory (the
// path as given, or a symlink's target, as /dev/fd's "/proc/self/fd"),
// they are taken as /proc/TID and /proc/TID/task/TID, so "/dev/fd/N" and
// "/proc/self/fd/N" are the thread's descriptor N. The other symlinks of
// procfs below its root (fd/N, cwd, root, exe) are the kernel's own
// "magic" links, which lead to the file itself rather than to a name, and
// the kernel follows them. alive says whether tid is still the thread
// that called, checked once its working directory is open.
//
// What it reaches decides nothing by itself: the caller decides on the
// inode of the descriptor returned, and connects to that inode.
//
// ownProc refuses (EACCES) a magic link (/proc/PID/root, cwd, fd/N) of
// a process that is neither tid's thread group nor a descendant of the
// process walking (the init stage: the sandbox's processes): the init
// stage is outside the command's Landlock domain and may hold
// capabilities the command has not, so it may follow links the command
// may not (Landlock's ptrace scope, the missing CAP_SYS_PTRACE), into
// another mount namespace.
func resolve(path string, tid int, alive func() bool, ownProc bool) (int, unix.Errno) {
	if path == "" {
		return -1, unix.ENOENT
	}
	start := "/"
	if !strings.HasPrefix(path, "/") {
		start = "/proc/" + strconv.Itoa(tid) + "/cwd"
	}
	cur, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errnoOf(err)
	}
	if start != "/" && !alive() {
		unix.Close(cur)
		return -1, unix.ESRCH
	}
	return walk(cur, path, tid, ownProc)
}

// ResolveAt is resolve from the directory open at dir instead of the
// thread's working directory (an absolute path starts at "/"), for the
// init stage's other supervisors (the Landlock backend's chain
// supervisor, which resolves from the thread's own directory descriptor,
// and from a symlink's directory), with ownProc (see resolve). dir stays
// the caller's.
func ResolveAt(dir int, path string, tid int) (int, unix.Errno) {
	if path == "" {
		return -1, unix.ENOENT
	}
	var cur int
	var err error
	if strings.HasPrefix(path, "/") {
		cur, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		cur, err = unix.FcntlInt(uintptr(dir), unix.F_DUPFD_CLOEXEC, 0)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	// Those supervisors serve the Landlock backend, whose /proc shows
	// the host's processes: a magic link of another process is refused
	// (ownProc), as Landlock's ptrace scope refuses the command.
	return walk(cur, path, tid, true)
}

// walk resolves path from cur (which it takes) for thread tid: resolve's
// loop.
func walk(cur int, path string, tid int, ownProc bool) (int, unix.Errno) {
	todo := splitPath(path)
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == "." {
			continue
		}
		if c == "self" || c == "thread-self" {
			if root, err := procRoot(cur); err != nil {
				unix.Close(cur)
				return -1, errnoOf(err)
			} else if root {
				t := strconv.Itoa(tid)
				sub := []string{t}
				if c == "thread-self" {
					sub = []string{t, "task", t}
				}
				todo = append(sub, todo...)
				continue
			}
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(cur)
			return -1, errnoOf(err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			unix.Close(cur)
			return -1, errnoOf(err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			if links++; links > maxLinks {
				unix.Close(cur)
				return -1, unix.ELOOP
			}
			magic, err := procBelowRoot(cur)
			if err != nil {
				unix.Close(cur)
				return -1, errnoOf(err)
			}
			if magic && ownProc && !ownProcDir(cur, tid) {
				unix.Close(cur)
				return -1, unix.EACCES
			}
			if magic {
				next, err = unix.Openat(cur, c, unix.O_PATH|unix.O_CLOEXEC, 0)
				if err != nil {
					unix.Close(cur)
					return -1, errnoOf(err)
				}
			} else {
				target, err := readlinkAt(cur, c)
				if err != nil {
					unix.Close(cur)
					return -1, errnoOf(err)
				}
				if target == "" {
					unix.Close(cur)
					return -1, unix.ENOENT
				}
				if strings.HasPrefix(target, "/") {
					root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
					if err != nil {
						unix.Close(cur)
						return -1, errnoOf(err)
					}
					unix.Close(cur)
					cur = root
				}
				todo = append(splitPath(target), todo...)
				continue
			}
		}
		unix.Close(cur)
		cur = next
	}
	if strings.HasSuffix(path, "/") {
		// A trailing slash asks for a directory, as "name/." does.
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(cur)
			return -1, unix.ENOTDIR
		}
	}
	return cur, 0
}

// splitPath is path's components, empty ones dropped ("a//b/" is a, b);
// ".." is kept, for the kernel to take (at "/" it stays there).
func splitPath(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// procRoot says whether dir is the root of a procfs.
func procRoot(dir int) (bool, error) {
	on, err := onProc(dir)
	if err != nil || !on {
		return false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return false, err
	}
	return st.Ino == procRootIno, nil
}

// procBelowRoot says whether dir is a directory of a procfs other than its
// root, where every symlink is a magic link.
func procBelowRoot(dir int) (bool, error) {
	on, err := onProc(dir)
	if err != nil || !on {
		return false, err
	}
	root, err := procRoot(dir)
	return !root, err
}

// procRootIno is the inode number of procfs's root (PROC_ROOT_INO).
const procRootIno = 1

func onProc(dir int) (bool, error) {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(dir, &fs); err != nil {
		return false, err
	}
	return fs.Type == unix.PROC_SUPER_MAGIC, nil
}

// readlinkAt reads the symlink name in dir.
func readlinkAt(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= unix.PathMax {
			return "", unix.ENAMETOOLONG
		}
	}
}

// ownProcDir says whether dir, a procfs directory below its root where a
// magic link lies (/proc/PID, /proc/PID/fd, /proc/PID/task/TID/fd, ...),
// is one of thread tid's own thread group, or of a descendant of this
// process (the init stage, a subreaper: the sandbox's processes, which
// Landlock's ptrace scope lets the command reach): the Tgid of its
// status file (in dir, or its parent).
func ownProcDir(dir, tid int) bool {
	own := statusField(unix.AT_FDCWD, "/proc/"+strconv.Itoa(tid)+"/status", "Tgid:")
	if own <= 0 {
		return false
	}
	t := statusField(dir, "status", "Tgid:")
	if t <= 0 {
		up, err := unix.Openat(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer unix.Close(up)
		if on, err := procBelowRoot(up); err != nil || !on {
			return false
		}
		t = statusField(up, "status", "Tgid:")
	}
	if t <= 0 {
		return false
	}
	return t == own || descendant(t)
}

// descendant says whether process pid descends from this one, by its
// parents in /proc.
func descendant(pid int) bool {
	self := unix.Getpid()
	for i := 0; i < 4096 && pid > 1; i++ {
		pid = statusField(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/status", "PPid:")
		if pid == self {
			return true
		}
	}
	return false
}

// statusField reads the field key ("Tgid:", "PPid:") of the status file
// name in dir; 0 when it cannot.
func statusField(dir int, name, key string) int {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if err != nil || n <= 0 {
		return 0
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			t, _ := strconv.Atoi(strings.TrimSpace(v))
			return t
		}
	}
	return 0
}
