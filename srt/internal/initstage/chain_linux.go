package initstage

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// The chain supervisor (the Landlock backend, NoNS.ChainFD). Landlock
// only grants, and a right to make or remove entries given on a directory
// holds for everything beneath it: a writable directory with a
// write-protected path beneath (a chain directory: a git checkout's
// working directory above .git/hooks, every working directory above the
// mandatory .bashrc, .vscode, ...) gets grants for its entries one by one
// and no right of its own (package llrules). Here the init stage's
// supervisor makes, removes and renames those entries for the command.
//
// It only adds: every notified call it does not perform is let through
// (Continue), and Landlock still applies to the command's own call. It
// performs a call when the directory whose entry changes is a chain
// directory and the entry's name is not one of its protected names (those
// that are, or lead to, a write-protected path, existing or not), or a
// directory beneath a chain directory that Landlock grants nothing (one
// the supervisor made, or moved there). A link or a rename also needs its
// other side writable by the rules (a chain directory's, or beneath a
// Landlock write grant). Directories are known by device and inode,
// recorded before the command starts; a directory beneath a chain
// directory is told by walking up its ".." entries to the first recorded
// one. That is race-free because the command can move nothing into or
// out of a write-protected region (neither Landlock nor the supervisor
// lets it), so whether a directory is writable by the rules never changes
// while it runs, wherever it is moved.
//
// Each call is read once from the command's memory (usernotif.Request,
// which checks the notification is still pending), its directory opened
// from the command's own descriptor or working directory, following
// symlinks but none on procfs (a magic link: /proc/self would be the init
// stage's), and the inode opened is the one decided on; the call is made
// relative to that descriptor with the final name, never following a
// symlink there (an open of a symlink follows it one link at a time and
// decides again on the entry it leads to; what the supervisor may not
// change there runs, and Landlock decides on the target). It runs with the
// command's credentials: the same user, and a root caller's capabilities
// dropped on the thread that makes it; new entries get the command's
// umask (from /proc/TID/status). An open returns its descriptor through
// SECCOMP_IOCTL_NOTIF_ADDFD, close-on-exec as asked; an open of a FIFO or
// a device, which may block, is made on a goroutine of its own.
//
// What it leaves to Landlock (so refused with EACCES in a chain
// directory): O_TMPFILE and O_PATH opens, symlinks through /proc, link
// with AT_EMPTY_PATH, truncate through a symlink, reads of new files where
// reads are restricted and a hidden path lies beneath (llrules' doc).

// fileKey identifies a directory.
type fileKey struct{ dev, ino uint64 }

func keyOf(st *unix.Stat_t) fileKey { return fileKey{uint64(st.Dev), st.Ino} }

// chainDir is one chain directory.
type chainDir struct {
	path      string
	protected map[string]bool
}

// chainSet is what the supervisor knows, fixed before the command starts.
type chainSet struct {
	dirs  map[fileKey]*chainDir
	stops map[fileKey]bool // directories under a protected name of a chain directory
	roots map[fileKey]bool // directories Landlock grants writes on (their subtree)
	devs  map[uint64]bool  // the devices of the chain directories
	// umask0 is the init stage's umask, which the kernel applies to what
	// the supervisor makes (the command's, unless it changed its own).
	umask0 uint32
}

// noNSWriteRoots are the paths Landlock grants writes on (restrictNoNS).
var noNSWriteRoots []string

// The kinds of calls.
const (
	opOpen = iota
	opMkdir
	opMknod
	opUnlink
	opSymlink
	opLink
	opRename
	opTruncate
)

// chainCall says where a call keeps its arguments: the entry it makes or
// removes (dirfd, path; dirfd -1: the working directory), the second
// entry of a link or a rename (dirfd2, path2: the new name), the flags
// (-1: fixed), the mode, and one more (mknod's device, truncate's length,
// symlink's target).
type chainCall struct {
	op            int
	dirfd, path   int
	dirfd2, path2 int
	flags         int
	fixed         uint64
	mode, extra   int
}

var chainCalls = map[string]chainCall{
	"open":      {op: opOpen, dirfd: -1, path: 0, flags: 1, mode: 2},
	"openat":    {op: opOpen, dirfd: 0, path: 1, flags: 2, mode: 3},
	"creat":     {op: opOpen, dirfd: -1, path: 0, flags: -1, fixed: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: 1},
	"mkdir":     {op: opMkdir, dirfd: -1, path: 0, flags: -1, mode: 1},
	"mkdirat":   {op: opMkdir, dirfd: 0, path: 1, flags: -1, mode: 2},
	"mknod":     {op: opMknod, dirfd: -1, path: 0, flags: -1, mode: 1, extra: 2},
	"mknodat":   {op: opMknod, dirfd: 0, path: 1, flags: -1, mode: 2, extra: 3},
	"unlink":    {op: opUnlink, dirfd: -1, path: 0, flags: -1},
	"unlinkat":  {op: opUnlink, dirfd: 0, path: 1, flags: 2},
	"rmdir":     {op: opUnlink, dirfd: -1, path: 0, flags: -1, fixed: unix.AT_REMOVEDIR},
	"symlink":   {op: opSymlink, dirfd: -1, path: 1, flags: -1, extra: 0},
	"symlinkat": {op: opSymlink, dirfd: 1, path: 2, flags: -1, extra: 0},
	"link":      {op: opLink, dirfd: -1, path: 0, dirfd2: -1, path2: 1, flags: -1},
	"linkat":    {op: opLink, dirfd: 0, path: 1, dirfd2: 2, path2: 3, flags: 4},
	"rename":    {op: opRename, dirfd: -1, path: 0, dirfd2: -1, path2: 1, flags: -1},
	"renameat":  {op: opRename, dirfd: 0, path: 1, dirfd2: 2, path2: 3, flags: -1},
	"renameat2": {op: opRename, dirfd: 0, path: 1, dirfd2: 2, path2: 3, flags: 4},
	"truncate":  {op: opTruncate, dirfd: -1, path: 0, flags: -1, extra: 1},
}

// registerChains reads the chain directories from fd, records them, and
// registers the supervisor's handlers.
func registerChains(arch seccomp.Arch, fd int) error {
	f := os.NewFile(uintptr(fd), "chains")
	data, err := readAllLimited(f)
	f.Close()
	if err != nil {
		return err
	}
	list, err := DecodeChains(data)
	if err != nil {
		return err
	}
	c := newChainSet(list, noNSWriteRoots)
	if len(c.dirs) == 0 {
		return nil
	}
	for _, n := range seccomp.ChainNotify() {
		nr, ok := arch.Number(n.Syscall)
		if !ok {
			continue
		}
		if err := supervisor.Stack(n, nr, c.handler(chainCalls[n.Syscall])); err != nil {
			return err
		}
	}
	debug("chain supervisor: %d chain directories, %d protected directories, %d write roots", len(c.dirs), len(c.stops), len(c.roots))
	return nil
}

// newChainSet records the chain directories of list and the directories
// of roots. A path that cannot be opened is left out: nothing is added
// there.
func newChainSet(list []Chain, roots []string) *chainSet {
	c := &chainSet{dirs: map[fileKey]*chainDir{}, stops: map[fileKey]bool{}, roots: map[fileKey]bool{}, devs: map[uint64]bool{}}
	for _, l := range list {
		fd, err := unix.Open(l.Path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			d := &chainDir{path: l.Path, protected: map[string]bool{}}
			for _, n := range l.Protected {
				d.protected[n] = true
				var s unix.Stat_t
				if unix.Fstatat(fd, n, &s, unix.AT_SYMLINK_NOFOLLOW) == nil && s.Mode&unix.S_IFMT == unix.S_IFDIR {
					c.stops[keyOf(&s)] = true
				}
			}
			c.dirs[keyOf(&st)] = d
			c.devs[uint64(st.Dev)] = true
		}
		unix.Close(fd)
	}
	for _, p := range roots {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			c.roots[keyOf(&st)] = true
		}
	}
	c.umask0 = uint32(unix.Umask(0o22))
	unix.Umask(int(c.umask0))
	return c
}

// The classes of a directory.
const (
	clsNone  = iota // not writable by the rules, or not known to be: Landlock decides
	clsChain        // a chain directory: its protected names are refused
	clsBelow        // beneath a chain directory, with no Landlock grant: all of it writable
	clsRoot         // beneath a Landlock write grant: Landlock allows it
)

// maxWalk bounds the walk up a directory's ".." entries.
const maxWalk = 256

// classify tells the class of the directory open at fd (and, for a chain
// directory, which). With near, a directory on a device without chain
// directories is clsNone at once: a directory beneath a chain directory
// that Landlock grants nothing is on the chain directory's device (it was
// made or moved there; a mount beneath is an entry at the start, and
// granted, or protected).
func (c *chainSet) classify(fd int, near bool) (int, *chainDir) {
	cur := fd
	defer func() {
		if cur != fd {
			unix.Close(cur)
		}
	}()
	for level := 0; level < maxWalk; level++ {
		var st unix.Stat_t
		if unix.Fstat(cur, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return clsNone, nil
		}
		k := keyOf(&st)
		if d := c.dirs[k]; d != nil {
			if level == 0 {
				return clsChain, d
			}
			return clsBelow, nil
		}
		if c.stops[k] {
			return clsNone, nil
		}
		if c.roots[k] {
			return clsRoot, nil
		}
		if near && !c.devs[uint64(st.Dev)] {
			return clsNone, nil
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return clsNone, nil
		}
		var ust unix.Stat_t
		if unix.Fstat(up, &ust) != nil || keyOf(&ust) == k {
			unix.Close(up)
			return clsNone, nil // "/"
		}
		if cur != fd {
			unix.Close(cur)
		}
		cur = up
	}
	return clsNone, nil
}

// entry is one directory entry a call names, its directory opened.
type entry struct {
	dir   int // O_PATH
	name  string
	slash bool // the path ended in "/"
	cls   int
	chain *chainDir
}

func (e *entry) close() {
	if e != nil && e.dir >= 0 {
		unix.Close(e.dir)
	}
}

// changeable says whether the supervisor may make, remove or rename e:
// in a chain directory, a name that is not protected; beneath one, any.
func (e *entry) changeable() bool {
	switch e.cls {
	case clsChain:
		return !e.chain.protected[e.name]
	case clsBelow:
		return true
	}
	return false
}

// writable says whether e may be changed by the rules at all, by the
// supervisor or by Landlock.
func (e *entry) writable() bool { return e.changeable() || e.cls == clsRoot }

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

// open opens the directory of path (from base) and classifies it. Made
// with the command's credentials (asCommand): a directory it could not
// search is not opened.
func (c *chainSet) open(base int, path string, near bool) (*entry, bool) {
	dir, name, slash, ok := split(path)
	if !ok {
		return nil, false
	}
	fd, err := resolveDir(base, dir)
	if err != nil {
		return nil, false
	}
	e := &entry{dir: fd, name: name, slash: slash}
	e.cls, e.chain = c.classify(fd, near)
	return e, true
}

// maxLinks is the kernel's bound on the symlinks one lookup follows.
const maxLinks = 40

// resolveDir opens the directory path names from base (AT_FDCWD for an
// absolute path) as the kernel would for the command, one component at a
// time: symlinks followed, but none on procfs (a magic link there, as
// /proc/self, would be the init stage's own). openat2 would do it in one
// call, but the init stage's own seccomp filter refuses openat2 to every
// one of its threads.
func resolveDir(base int, path string) (int, error) {
	cur := base
	if strings.HasPrefix(path, "/") || base == unix.AT_FDCWD {
		cur = -1
	}
	own := func(fd int) {
		if cur >= 0 && cur != base {
			unix.Close(cur)
		}
		cur = fd
	}
	defer func() {
		if cur >= 0 && cur != base {
			unix.Close(cur)
		}
	}()
	comps := strings.Split(path, "/")
	if strings.HasPrefix(path, "/") {
		fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		own(fd)
	}
	if cur < 0 {
		return -1, unix.EBADF
	}
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == "" || c == "." {
			continue
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			own(next)
			continue
		case unix.S_IFLNK:
		default:
			unix.Close(next)
			return -1, unix.ENOTDIR
		}
		var fs unix.Statfs_t
		links++
		if links > maxLinks || unix.Fstatfs(cur, &fs) != nil || fs.Type == unix.PROC_SUPER_MAGIC {
			unix.Close(next)
			return -1, unix.ELOOP
		}
		buf := make([]byte, maxPath)
		n, err := unix.Readlinkat(next, "", buf)
		unix.Close(next)
		if err != nil || n <= 0 || n >= len(buf) {
			return -1, unix.ELOOP
		}
		target := string(buf[:n])
		comps = append(strings.Split(target, "/"), comps...)
		if strings.HasPrefix(target, "/") {
			fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return -1, err
			}
			own(fd)
		}
	}
	if cur == base {
		return unix.FcntlInt(uintptr(base), unix.F_DUPFD_CLOEXEC, 0) // the caller closes base and the result apart
	}
	fd := cur
	cur = -1
	return fd, nil
}

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

// handler answers one call of kind call.
func (c *chainSet) handler(call chainCall) usernotif.Handler {
	return func(r *usernotif.Request) usernotif.Reply {
		reply, done := c.handle(r, call)
		if !done {
			return usernotif.Continue()
		}
		return reply
	}
}

// handle performs the call when the rules allow what Landlock could not,
// and says whether it did (done false: let the call run).
func (c *chainSet) handle(r *usernotif.Request, call chainCall) (reply usernotif.Reply, done bool) {
	flags := call.fixed
	if call.flags >= 0 {
		flags = r.Args[call.flags]
	}
	// An open that writes nothing is Landlock's (it is notified only when
	// the filesystem observer wants every open); O_PATH and O_TMPFILE ones
	// too.
	if call.op == opOpen && (flags&seccomp.OpenWriteFlags == 0 || flags&(unix.O_PATH|unix.O_TMPFILE&^unix.O_DIRECTORY) != 0) {
		return reply, false
	}
	path, ok := rawPath(r, call.path)
	if !ok {
		return reply, false
	}
	var path2, target string
	if call.op == opLink || call.op == opRename {
		if path2, ok = rawPath(r, call.path2); !ok {
			return reply, false
		}
	}
	if call.op == opSymlink {
		raw, err := r.ReadString(r.Args[call.extra], maxPath)
		if err != nil {
			return reply, false
		}
		target = string(raw)
	}
	b1, ok := base(r, call.dirfd, path)
	if !ok {
		return reply, false
	}
	defer closeBase(b1)
	b2 := unix.AT_FDCWD
	if call.op == opLink || call.op == opRename {
		if b2, ok = base(r, call.dirfd2, path2); !ok {
			return reply, false
		}
		defer closeBase(b2)
	}
	var umask uint32
	creates := call.op == opMkdir || call.op == opMknod || call.op == opOpen && flags&unix.O_CREAT != 0
	if creates {
		if umask, ok = umaskOf(r); !ok {
			return reply, false
		}
	}
	ran := asCommand(func() {
		two := call.op == opLink || call.op == opRename
		e, ok := c.open(b1, path, !two)
		if !ok {
			return
		}
		defer e.close()
		if two {
			e2, ok := c.open(b2, path2, false)
			if !ok {
				return
			}
			defer e2.close()
			if !e.writable() || !e2.writable() || e.cls == clsRoot && e2.cls == clsRoot {
				return
			}
			reply, done = c.two(call, r, flags, e, e2)
			return
		}
		if !e.changeable() {
			return
		}
		reply, done = c.one(call, r, flags, umask, target, e)
	})
	if !ran {
		return reply, false
	}
	return reply, done
}

func closeBase(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// perm is the mode to make an entry with, and the mode it must end up
// with when the init stage's umask takes bits the command's leaves
// (fix: then the entry is made without them and given them after, never
// more open than asked).
func (c *chainSet) perm(mode, umask uint32) (make uint32, fix uint32, needFix bool) {
	mode &= 0o7777
	if umask == c.umask0 {
		return mode, 0, false // the kernel applies it, as for the command (default ACLs too)
	}
	want := mode &^ umask
	return want, want, want&^c.umask0 != want
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EIO
}

// one performs a call on one entry.
func (c *chainSet) one(call chainCall, r *usernotif.Request, flags uint64, umask uint32, target string, e *entry) (usernotif.Reply, bool) {
	switch call.op {
	case opOpen:
		if e.slash {
			return usernotif.Reply{}, false
		}
		return c.openFile(e, int(flags), uint32(r.Args[call.mode]), umask, 0)
	case opMkdir:
		m, fix, needFix := c.perm(uint32(r.Args[call.mode]), umask)
		if err := unix.Mkdirat(e.dir, e.name, m); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		if needFix {
			if fd, err := unix.Openat(e.dir, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				unix.Fchmod(fd, fix)
				unix.Close(fd)
			}
		}
		return usernotif.Reply{}, true
	case opMknod:
		if e.slash {
			return usernotif.Reply{}, false
		}
		mode := uint32(r.Args[call.mode])
		m, fix, needFix := c.perm(mode, umask)
		if err := unix.Mknodat(e.dir, e.name, mode&unix.S_IFMT|m, int(r.Args[call.extra])); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		if needFix {
			unix.Fchmodat(e.dir, e.name, fix, 0)
		}
		return usernotif.Reply{}, true
	case opUnlink:
		if e.slash && flags&unix.AT_REMOVEDIR == 0 {
			return usernotif.Reply{}, false
		}
		if err := unix.Unlinkat(e.dir, e.name, int(flags)); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		return usernotif.Reply{}, true
	case opSymlink:
		if e.slash {
			return usernotif.Reply{}, false
		}
		if err := unix.Symlinkat(target, e.dir, e.name); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		return usernotif.Reply{}, true
	case opTruncate:
		if e.slash {
			return usernotif.Reply{}, false
		}
		fd, kind, err := lookup(e)
		if err != nil || kind != unix.S_IFREG {
			closeBase(fd)
			return usernotif.Reply{}, false
		}
		defer unix.Close(fd)
		w, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		defer unix.Close(w)
		if err := unix.Ftruncate(w, int64(r.Args[call.extra])); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		return usernotif.Reply{}, true
	}
	return usernotif.Reply{}, false
}

// lookup opens e's entry itself (O_PATH, not following a symlink) and
// says what it is.
func lookup(e *entry) (int, uint32, error) {
	fd, err := unix.Openat(e.dir, e.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, st.Mode & unix.S_IFMT, nil
}

// openFile performs an open (or creat) of e, and hands the descriptor to
// the command. A symlink at e is followed as the kernel would (links:
// how many so far), the entry it names decided on again.
func (c *chainSet) openFile(e *entry, flags int, mode, umask uint32, links int) (usernotif.Reply, bool) {
	cloexec := flags&unix.O_CLOEXEC != 0
	flags |= unix.O_CLOEXEC
	give := func(fd int) (usernotif.Reply, bool) {
		return usernotif.Reply{Inject: &usernotif.Injection{FD: fd, CloExec: cloexec}}, true
	}
	create := func() (usernotif.Reply, bool, bool) {
		m, fix, needFix := c.perm(mode, umask)
		fd, err := unix.Openat(e.dir, e.name, flags|unix.O_EXCL|unix.O_NOFOLLOW, m)
		if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
			return usernotif.Reply{}, false, true // made meanwhile: look again
		}
		if err != nil {
			return usernotif.Fail(errnoOf(err)), true, false
		}
		if needFix {
			unix.Fchmod(fd, fix)
		}
		reply, _ := give(fd)
		return reply, true, false
	}
	if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		reply, done, _ := create()
		return reply, done
	}
	for try := 0; try < 4; try++ {
		p, kind, err := lookup(e)
		if err == unix.ENOENT && flags&unix.O_CREAT != 0 {
			reply, done, again := create()
			if again {
				continue
			}
			return reply, done
		}
		if err == nil && kind == unix.S_IFLNK {
			return c.follow(e, p, flags, mode, umask, links)
		}
		if err != nil {
			return usernotif.Reply{}, false // the kernel says what it is
		}
		reopen := "/proc/self/fd/" + strconv.Itoa(p)
		flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW
		if kind != unix.S_IFREG && kind != unix.S_IFDIR {
			// A FIFO's open waits for the other end, a device's may
			// block: not in the supervisor's loop.
			return usernotif.Reply{Later: func() usernotif.Reply {
				defer unix.Close(p)
				reply := usernotif.Continue()
				asCommand(func() {
					fd, err := unix.Open(reopen, flags, 0)
					if err != nil {
						reply = usernotif.Fail(errnoOf(err))
						return
					}
					reply, _ = give(fd)
				})
				return reply
			}}, true
		}
		defer unix.Close(p)
		// O_NONBLOCK: an open that would wait for a lease to break fails
		// at once (EWOULDBLOCK), and is let through instead.
		fd, err := unix.Open(reopen, flags|unix.O_NONBLOCK, 0)
		if err == unix.EWOULDBLOCK {
			return usernotif.Reply{}, false
		}
		if err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		if flags&unix.O_NONBLOCK == 0 {
			if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
				unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
			}
		}
		return give(fd)
	}
	return usernotif.Reply{}, false
}

// follow opens what the symlink at e (open at p, which it closes) names:
// the entry the target leads to, when the supervisor may change it;
// otherwise the call runs, and Landlock decides on the target (allowed
// beneath a grant, refused on a protected path).
func (c *chainSet) follow(e *entry, p int, flags int, mode, umask uint32, links int) (usernotif.Reply, bool) {
	buf := make([]byte, maxPath)
	n, err := unix.Readlinkat(p, "", buf)
	unix.Close(p)
	if flags&unix.O_NOFOLLOW != 0 || links >= maxLinks || err != nil || n <= 0 || n >= len(buf) {
		return usernotif.Reply{}, false
	}
	next, ok := c.open(e.dir, string(buf[:n]), true)
	if !ok {
		return usernotif.Reply{}, false
	}
	defer next.close()
	if next.slash || !next.changeable() {
		return usernotif.Reply{}, false
	}
	return c.openFile(next, flags, mode, umask, links+1)
}

// two performs a link or a rename, e the old name and e2 the new.
func (c *chainSet) two(call chainCall, r *usernotif.Request, flags uint64, e, e2 *entry) (usernotif.Reply, bool) {
	if call.op == opLink {
		if flags&unix.AT_EMPTY_PATH != 0 || e.slash || e2.slash {
			return usernotif.Reply{}, false
		}
		if flags&unix.AT_SYMLINK_FOLLOW != 0 {
			// Linking what a symlink points to: only where it is no
			// symlink (then it is the same).
			var st unix.Stat_t
			if err := unix.Fstatat(e.dir, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return usernotif.Reply{}, false
			}
			flags &^= unix.AT_SYMLINK_FOLLOW
		}
		if err := unix.Linkat(e.dir, e.name, e2.dir, e2.name, int(flags)); err != nil {
			return usernotif.Fail(errnoOf(err)), true
		}
		return usernotif.Reply{}, true
	}
	if err := unix.Renameat2(e.dir, e.name, e2.dir, e2.name, uint(flags)); err != nil {
		return usernotif.Fail(errnoOf(err)), true
	}
	return usernotif.Reply{}, true
}
