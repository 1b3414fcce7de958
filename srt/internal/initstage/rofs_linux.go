package initstage

import (
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/unixgate"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// The read-only supervisor (the Landlock backend). bubblewrap refuses a
// write outside the write roots with its read-only mounts, EROFS, and
// Landlock with EACCES; programs treat EROFS as "nothing to write here"
// (GnuPG's locks). And Landlock does not cover the calls that change a
// file's metadata (chmod, chown, utimensat, the xattr calls), which a
// read-only mount refuses. The init stage's supervisor closes both, with
// the rules Landlock was given (the grants by device and inode, and the
// chain supervisor's chain directories and protected names: a directory
// is told by walking up its ".." entries to the first one recorded, as
// the chain supervisor does).
//
// Writes Landlock covers (an open that writes or creates, mkdir, mknod,
// unlink, rmdir, rename, link, symlink, truncate; behind the chain
// supervisor, which performs what Landlock cannot grant): the call's
// directory is opened as the kernel would resolve it for the calling
// thread (unixgate.ResolveAt, with the command's credentials) and the
// call answered EROFS when the rules refuse the write there; every other
// call runs (Continue) and Landlock decides. A check raced by the command
// (a symlink swapped in) only changes which refusal it sees: Landlock
// still refuses what the rules refuse, and a call this supervisor lets
// run is Landlock's to refuse. What is left to Landlock (EACCES still):
// an entry that exists where the call would make one (the kernel's
// EEXIST), an open for writing of a file the command may not write anyway
// (no write permission: the kernel's EACCES comes first there, as under
// bubblewrap), of a device, FIFO or socket (a read-only mount does not
// refuse those), a rename or link with one side writable (bubblewrap:
// EXDEV, two mounts), and anything it cannot resolve.
//
// Metadata, which Landlock does not cover: the supervisor opens the file
// the call names (the entry itself, O_PATH|O_NOFOLLOW, from the directory
// resolved as above, a symlink followed one link at a time where the call
// follows it; or the caller's own descriptor, pidfd_getfd), decides on
// that inode, and either answers EROFS or performs the call on it with the
// command's credentials (asCommand) and returns its result. It never lets
// such a call run: a path the command controls could be swapped between
// the check and the kernel's own lookup. A file beneath a grant is
// allowed, unless the grant is one of /dev's devices (devWrites: their
// data only); a directory by its own class.

// rofs is the read-only supervisor's state.
type rofs struct {
	c *chainSet // w: the writes' grants and chain directories
	// meta is c.w without the grants under /dev, for metadata.
	meta dirSet
}

// registerReadOnly registers the read-only supervisor's handlers behind
// the chain supervisor's (c: its chain directories, maybe none).
func registerReadOnly(arch seccomp.Arch, c *chainSet) error {
	f := &rofs{c: c, meta: c.w}
	var kept []string
	for _, p := range noNSWriteRoots {
		if !within(p, "/dev") {
			kept = append(kept, p)
		}
	}
	m := newDirSet(kept)
	f.meta.roots, f.meta.files = m.roots, m.files
	for _, n := range seccomp.ROFSNotify() {
		nr, ok := arch.Number(n.Syscall)
		if !ok {
			continue
		}
		var h usernotif.Handler
		if call, ok := chainCalls[n.Syscall]; ok {
			h = f.entryHandler(call)
		} else if call, ok := metaCalls[n.Syscall]; ok {
			h = f.metaHandler(call)
		} else {
			for _, a := range seccomp.ROFSAccessCalls {
				if a.Name == n.Syscall {
					h = f.accessHandler(a)
				}
			}
		}
		if err := supervisor.Stack(n, nr, h); err != nil {
			return err
		}
	}
	return nil
}

// Decisions.
const (
	undecided = iota // the call runs: Landlock, or the kernel, decides
	allowed
	refusedRO
)

// entryClass decides a write of the entry name in the directory open at
// dir by the sets s: allowed, refusedRO, or undecided.
func entryClass(s *dirSet, dir int, name string) int {
	cls, chain, known := s.class(dir, false)
	switch {
	case !known:
		return undecided
	case cls == clsRoot || cls == clsBelow:
		return allowed
	case cls == clsChain:
		if supervised(cls, chain, name) && !chain.aliases(dir, name) {
			return allowed
		}
		return refusedRO
	}
	return refusedRO
}

// fileClass decides a change of the file open at fd (st its stat) whose
// entry is name in the directory open at dir: a directory by its own
// class, another file by its grant or its entry.
func fileClass(s *dirSet, dir int, name string, fd int, st *unix.Stat_t) int {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		k := keyOf(st)
		switch {
		case s.dirs[k] != nil || s.roots[k]:
			return allowed // a chain directory is writable itself
		case s.stops[k]:
			return refusedRO
		case dir >= 0:
			return entryClass(s, dir, name)
		}
		// Known by a descriptor alone: up from itself (which needs the
		// right to search it).
		cls, _, known := s.class(fd, false)
		switch {
		case !known:
			return undecided
		case cls == clsNone:
			return refusedRO
		}
		return allowed
	}
	if s.files[keyOf(st)] {
		return allowed
	}
	return entryClass(s, dir, name)
}

// entryHandler answers a write Landlock covers: EROFS where the rules
// refuse it, else Continue.
func (f *rofs) entryHandler(call chainCall) usernotif.Handler {
	return func(r *usernotif.Request) usernotif.Reply {
		if f.refusesEntry(r, call) {
			return usernotif.Fail(unix.EROFS)
		}
		return usernotif.Continue()
	}
}

// refusesEntry says whether the rules refuse the write call of r, as the
// kernel would reach it, and bubblewrap would say EROFS.
func (f *rofs) refusesEntry(r *usernotif.Request, call chainCall) bool {
	flags := call.fixed
	if call.flags >= 0 {
		flags = r.Args[call.flags]
	}
	if call.op == opOpen && (flags&seccomp.OpenWriteFlags == 0 || flags&unix.O_PATH != 0) {
		return false
	}
	path, ok := rawPath(r, call.path)
	if !ok {
		return false
	}
	b1, ok := base(r, call.dirfd, path)
	if !ok {
		return false
	}
	defer closeBase(b1)
	var path2 string
	b2 := unix.AT_FDCWD
	if call.op == opLink || call.op == opRename {
		if path2, ok = rawPath(r, call.path2); !ok {
			return false
		}
		if b2, ok = base(r, call.dirfd2, path2); !ok {
			return false
		}
		defer closeBase(b2)
	}
	refuse := false
	asCommand(func() {
		switch call.op {
		case opOpen:
			if flags&(unix.O_TMPFILE&^unix.O_DIRECTORY) != 0 {
				refuse = f.refusesDir(b1, path, r.Pid)
				return
			}
			refuse = f.refusesOpen(b1, path, r.Pid, flags, true, 0)
		case opTruncate:
			refuse = f.refusesOpen(b1, path, r.Pid, unix.O_WRONLY|unix.O_TRUNC, false, 0)
		case opMkdir, opMknod, opSymlink:
			refuse = f.refusesNew(b1, path, r.Pid)
		case opUnlink:
			refuse = f.refusesName(b1, path, r.Pid) == refusedRO
		case opLink, opRename:
			refuse = f.refusesTwo(call.op, flags, b1, path, b2, path2, r.Pid)
		}
	})
	return refuse
}

// resolveEntry opens the directory of path from base (resolved for
// thread tid) and splits off the final name.
func resolveEntry(base int, path string, tid int) (dir int, name string, slash bool, errno unix.Errno) {
	d, name, slash, ok := split(path)
	if !ok {
		return -1, "", false, unix.EINVAL
	}
	fd, e := unixgate.ResolveAt(base, d, tid)
	if e != 0 {
		return -1, "", false, e
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return -1, "", false, unix.ENOTDIR
	}
	return fd, name, slash, 0
}

// refusesName decides a change of the entry path names (unlink, rename).
func (f *rofs) refusesName(base int, path string, tid int) int {
	dir, name, _, e := resolveEntry(base, path, tid)
	if e != 0 {
		return undecided
	}
	defer unix.Close(dir)
	return entryClass(&f.c.w, dir, name)
}

// refusesTwo decides a link or a rename: none across mounts (the kernel's
// EXDEV comes first) or of a linked descriptor (AT_EMPTY_PATH: bubblewrap's
// EXDEV where it leads out of its mount; Landlock's refer right decides);
// a rename that moves or replaces an entry the rules refuse to change
// (bubblewrap: EROFS, or EBUSY for a mount point); a link whose new name
// they refuse, of an old name that exists (the kernel's ENOENT first). A
// link of a refused file into the write roots is Landlock's (EXDEV: it
// lacks the refer right).
func (f *rofs) refusesTwo(op int, flags uint64, b1 int, path string, b2 int, path2 string, tid int) bool {
	if op == opLink && flags&unix.AT_EMPTY_PATH != 0 {
		return false
	}
	dir1, name1, _, e := resolveEntry(b1, path, tid)
	if e != 0 {
		return false
	}
	defer unix.Close(dir1)
	dir2, name2, _, e := resolveEntry(b2, path2, tid)
	if e != 0 {
		return false
	}
	defer unix.Close(dir2)
	if !sameMount(dir1, dir2) {
		return false
	}
	if op == opLink {
		var st unix.Stat_t
		if unix.Fstatat(dir1, name1, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false
		}
		if unix.Fstatat(dir2, name2, &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
			return false // the kernel's EEXIST
		}
		return entryClass(&f.c.w, dir2, name2) == refusedRO
	}
	return entryClass(&f.c.w, dir1, name1) == refusedRO || entryClass(&f.c.w, dir2, name2) == refusedRO
}

// sameMount says whether the directories open at a and b are on one mount
// (false when it cannot tell).
func sameMount(a, b int) bool {
	var sa, sb unix.Statx_t
	if unix.Statx(a, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &sa) != nil || unix.Statx(b, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &sb) != nil {
		return false
	}
	return sa.Mask&unix.STATX_MNT_ID != 0 && sb.Mask&unix.STATX_MNT_ID != 0 && sa.Mnt_id == sb.Mnt_id
}

// refusesNew decides a call that makes the entry path names: one that
// exists is the kernel's EEXIST.
func (f *rofs) refusesNew(base int, path string, tid int) bool {
	dir, name, _, e := resolveEntry(base, path, tid)
	if e != 0 {
		return false
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
		return false
	}
	return entryClass(&f.c.w, dir, name) == refusedRO
}

// refusesDir decides an O_TMPFILE open in the directory path names.
func (f *rofs) refusesDir(base int, path string, tid int) bool {
	fd, e := unixgate.ResolveAt(base, path, tid)
	if e != 0 {
		return false
	}
	defer unix.Close(fd)
	cls, _, known := f.c.w.class(fd, false)
	return known && cls == clsNone
}

// refusesOpen decides an open with flags that writes or creates (or a
// truncate: O_WRONLY|O_TRUNC) of path, a symlink at its end followed as
// the kernel would (links: how many so far). dacFirst: the kernel checks
// the file's permissions before the mount's read-only flag (open; not
// truncate).
func (f *rofs) refusesOpen(base int, path string, tid int, flags uint64, dacFirst bool, links int) bool {
	dir, name, slash, e := resolveEntry(base, path, tid)
	if e != 0 {
		return false
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		// Made by the call: refused where the directory takes no new
		// entry ("name/" is the kernel's EISDIR).
		return flags&unix.O_CREAT != 0 && !slash && entryClass(&f.c.w, dir, name) == refusedRO
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		return false // the kernel's EEXIST
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		if flags&unix.O_NOFOLLOW != 0 || links >= maxLinks {
			return false
		}
		buf := make([]byte, maxPath)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil || n <= 0 || n >= len(buf) {
			return false
		}
		return f.refusesOpen(dir, string(buf[:n]), tid, flags, dacFirst, links+1)
	case unix.S_IFREG:
	default:
		// A directory (the kernel's EISDIR), or a device, FIFO or
		// socket, which a read-only mount lets be opened for writing.
		return false
	}
	// An existing file: written with O_WRONLY, O_RDWR or O_TRUNC.
	if flags&unix.O_ACCMODE == unix.O_RDONLY && flags&unix.O_TRUNC == 0 {
		return false
	}
	if fileClass(&f.c.w, dir, name, fd, &st) != refusedRO {
		return false
	}
	// An open checks the file's permissions before the mount's
	// read-only flag: a file the command may not write stays EACCES
	// (O_TRUNC asks to write too).
	return !dacFirst || unix.Faccessat(unix.AT_FDCWD, procFD(fd), unix.W_OK, unix.AT_EACCESS) == nil
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// The kinds of metadata calls.
const (
	metaMode = iota
	metaOwner
	metaTimes
	metaSetXattr
	metaRemoveXattr
)

// How a call passes its times.
const (
	timesSpec = iota // struct timespec[2]
	timesVal         // struct timeval[2]
	timesBuf         // struct utimbuf
)

// metaCall says where a metadata call keeps its arguments: the
// descriptor it acts on alone (fd; -1: none), or its path (dirfd, path;
// dirfd -1: the working directory), its AT_* flags (-1: none, then
// nofollow says whether it acts on a symlink itself), and its values (a,
// b: the mode, the owner and group, the times, the xattr's name and its
// value; size, xflags: the value's size and setxattr's flags).
type metaCall struct {
	op          int
	fd          int
	dirfd, path int
	flags       int
	nofollow    bool
	a, b        int
	size        int
	xflags      int
	times       int
	xattrArgs   bool // setxattrat: the value, size and flags in a struct xattr_args at b
}

var metaCalls = map[string]metaCall{
	"chmod":         {op: metaMode, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1},
	"fchmodat":      {op: metaMode, fd: -1, dirfd: 0, path: 1, flags: -1, a: 2},
	"fchmodat2":     {op: metaMode, fd: -1, dirfd: 0, path: 1, flags: 3, a: 2},
	"fchmod":        {op: metaMode, fd: 0, flags: -1, a: 1},
	"chown":         {op: metaOwner, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1, b: 2},
	"lchown":        {op: metaOwner, fd: -1, dirfd: -1, path: 0, flags: -1, nofollow: true, a: 1, b: 2},
	"fchownat":      {op: metaOwner, fd: -1, dirfd: 0, path: 1, flags: 4, a: 2, b: 3},
	"fchown":        {op: metaOwner, fd: 0, flags: -1, a: 1, b: 2},
	"utime":         {op: metaTimes, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1, times: timesBuf},
	"utimes":        {op: metaTimes, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1, times: timesVal},
	"futimesat":     {op: metaTimes, fd: -1, dirfd: 0, path: 1, flags: -1, a: 2, times: timesVal},
	"utimensat":     {op: metaTimes, fd: -1, dirfd: 0, path: 1, flags: 3, a: 2, times: timesSpec},
	"setxattr":      {op: metaSetXattr, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1, b: 2, size: 3, xflags: 4},
	"lsetxattr":     {op: metaSetXattr, fd: -1, dirfd: -1, path: 0, flags: -1, nofollow: true, a: 1, b: 2, size: 3, xflags: 4},
	"fsetxattr":     {op: metaSetXattr, fd: 0, flags: -1, a: 1, b: 2, size: 3, xflags: 4},
	"setxattrat":    {op: metaSetXattr, fd: -1, dirfd: 0, path: 1, flags: 2, a: 3, b: 4, size: 5, xattrArgs: true},
	"removexattr":   {op: metaRemoveXattr, fd: -1, dirfd: -1, path: 0, flags: -1, a: 1},
	"lremovexattr":  {op: metaRemoveXattr, fd: -1, dirfd: -1, path: 0, flags: -1, nofollow: true, a: 1},
	"fremovexattr":  {op: metaRemoveXattr, fd: 0, flags: -1, a: 1},
	"removexattrat": {op: metaRemoveXattr, fd: -1, dirfd: 0, path: 1, flags: 2, a: 3},
}

// metaHandler answers a metadata call: EROFS where the rules refuse it,
// else its result, performed by the supervisor.
func (f *rofs) metaHandler(call metaCall) usernotif.Handler {
	return func(r *usernotif.Request) usernotif.Reply {
		return f.meta1(r, call)
	}
}

// metaTarget is what a metadata call acts on: fd (O_PATH, or the
// caller's own descriptor when byFD), its stat, and the decision.
type metaTarget struct {
	fd       int
	byFD     bool // the caller's descriptor alone (fchmod, fchown, fsetxattr, futimens)
	st       unix.Stat_t
	decision int
}

func (f *rofs) meta1(r *usernotif.Request, call metaCall) usernotif.Reply {
	// Everything the call needs is read once, before any decision.
	args, errno := readMetaArgs(r, call)
	if errno != 0 {
		return usernotif.Fail(errno)
	}
	var flags uint64
	if call.flags >= 0 {
		flags = r.Args[call.flags]
		if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return usernotif.Fail(unix.EINVAL)
		}
	}
	nofollow := call.nofollow || flags&unix.AT_SYMLINK_NOFOLLOW != 0
	var t metaTarget
	fail := unix.Errno(0)
	ran := asCommand(func() {
		t, fail = f.target(r, call, args, flags, nofollow)
		if fail != 0 {
			return
		}
		defer unix.Close(t.fd)
		switch t.decision {
		case refusedRO:
			fail = unix.EROFS
			return
		case undecided:
			// Neither known allowed nor known refused (the file moved
			// while it was decided, or a directory on the way up could
			// not be searched): refused, as Landlock refuses what it
			// cannot place.
			fail = unix.EACCES
			return
		}
		fail = perform(call, &t, args, nofollow)
	})
	if !ran {
		return usernotif.Fail(unix.EPERM)
	}
	if fail != 0 {
		return usernotif.Fail(fail)
	}
	return usernotif.Reply{}
}

// metaArgs are a metadata call's values, read from the caller.
type metaArgs struct {
	path     string
	hasPath  bool
	mode     uint32
	uid, gid int
	times    []unix.Timespec // nil: now
	name     string
	value    []byte
	xflags   int
}

const (
	xattrNameMax = 255
	xattrSizeMax = 65536
)

func readMetaArgs(r *usernotif.Request, call metaCall) (metaArgs, unix.Errno) {
	var a metaArgs
	if call.fd < 0 {
		p := r.Args[call.path]
		// utimensat and futimesat with no path act on the descriptor.
		if p != 0 || call.op != metaTimes || call.dirfd < 0 {
			raw, err := r.ReadString(p, maxPath)
			if err != nil {
				return a, errnoOf(err)
			}
			a.path, a.hasPath = string(raw), true
		}
	}
	switch call.op {
	case metaMode:
		a.mode = uint32(r.Args[call.a]) & 0o7777
	case metaOwner:
		a.uid, a.gid = int(int32(r.Args[call.a])), int(int32(r.Args[call.b]))
	case metaTimes:
		if r.Args[call.a] == 0 {
			break
		}
		b, err := r.Read(r.Args[call.a], timesSize[call.times])
		if err != nil {
			return a, errnoOf(err)
		}
		if a.times, err = decodeTimes(call.times, b); err != nil {
			return a, errnoOf(err)
		}
	case metaSetXattr, metaRemoveXattr:
		raw, err := r.ReadString(r.Args[call.a], xattrNameMax)
		if err == unix.ENAMETOOLONG {
			return a, unix.ERANGE
		}
		if err != nil {
			return a, errnoOf(err)
		}
		if len(raw) == 0 {
			return a, unix.ERANGE
		}
		a.name = string(raw)
		if call.op == metaRemoveXattr {
			break
		}
		ptr, size, xflags := r.Args[call.b], r.Args[call.size], r.Args[call.xflags]
		if call.xattrArgs {
			if size != 16 { // struct xattr_args, its first version
				return a, unix.EINVAL
			}
			b, err := r.Read(ptr, 16)
			if err != nil {
				return a, errnoOf(err)
			}
			ptr, size, xflags = decodeXattrArgs(b)
		}
		if size > xattrSizeMax {
			return a, unix.E2BIG
		}
		if size > 0 {
			v, err := r.Read(ptr, int(size))
			if err != nil {
				return a, errnoOf(err)
			}
			a.value = v
		} else {
			a.value = []byte{}
		}
		a.xflags = int(int32(xflags))
	}
	return a, 0
}

// timesSize is the size of each kind of times (two 64-bit words each).
var timesSize = map[int]int{timesSpec: 32, timesVal: 32, timesBuf: 16}

// decodeTimes reads the times a call passed (kind, timesSize[kind]
// bytes, the native little-endian layout) as utimensat's: a timeval's
// microseconds out of range are the kernel's EINVAL; a timespec's
// nanoseconds (UTIME_NOW, UTIME_OMIT) are passed on for the kernel to
// check.
func decodeTimes(kind int, b []byte) ([]unix.Timespec, error) {
	if len(b) != timesSize[kind] {
		return nil, unix.EFAULT
	}
	switch kind {
	case timesSpec:
		return []unix.Timespec{{Sec: le64(b[0:]), Nsec: le64(b[8:])}, {Sec: le64(b[16:]), Nsec: le64(b[24:])}}, nil
	case timesVal:
		var out []unix.Timespec
		for i := 0; i < 2; i++ {
			sec, usec := le64(b[16*i:]), le64(b[16*i+8:])
			if usec < 0 || usec >= 1000000 {
				return nil, unix.EINVAL
			}
			out = append(out, unix.Timespec{Sec: sec, Nsec: usec * 1000})
		}
		return out, nil
	}
	return []unix.Timespec{{Sec: le64(b[0:])}, {Sec: le64(b[8:])}}, nil
}

// decodeXattrArgs reads setxattrat's struct xattr_args (its first
// version, 16 bytes): the value's address, its size, and the flags.
func decodeXattrArgs(b []byte) (ptr, size, flags uint64) {
	return uint64(le64(b[0:])), uint64(le32(b[8:])), uint64(le32(b[12:]))
}

func le64(b []byte) int64 {
	return int64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// target opens what a metadata call acts on, as the kernel would find it
// for the calling thread, and decides on it (the rules for metadata,
// f.meta).
func (f *rofs) target(r *usernotif.Request, call metaCall, args metaArgs, flags uint64, nofollow bool) (metaTarget, unix.Errno) {
	var t metaTarget
	desc := call.fd
	if desc < 0 && (!args.hasPath || args.path == "" && flags&unix.AT_EMPTY_PATH != 0) {
		desc = call.dirfd // futimens (utimensat with no path), or AT_EMPTY_PATH
	}
	if desc >= 0 {
		t.byFD = call.fd >= 0 || !args.hasPath
		n := int32(r.Args[desc])
		switch {
		case n == unix.AT_FDCWD && call.fd < 0 && args.hasPath:
			fd, ok := base(r, -1, "")
			if !ok {
				return t, unix.ENOENT
			}
			t.fd = fd
		case n < 0:
			return t, unix.EBADF
		default:
			fd, err := r.FD(int(n))
			if err != nil {
				return t, unix.EBADF
			}
			t.fd = fd
		}
		if err := unix.Fstat(t.fd, &t.st); err != nil {
			unix.Close(t.fd)
			return t, errnoOf(err)
		}
		t.decision = f.decideFD(&f.meta, t.fd, &t.st)
		return t, 0
	}
	if args.path == "" {
		return t, unix.ENOENT
	}
	b, ok := base(r, call.dirfd, args.path)
	if !ok {
		return t, unix.EBADF
	}
	defer closeBase(b)
	return f.lookupFile(&f.meta, b, args.path, r.Pid, nofollow, 0)
}

// lookupFile opens the file path names from base for thread tid: the
// entry itself with nofollow, else what its symlinks lead to (links: how
// many so far), and decides on it by the sets s.
func (f *rofs) lookupFile(s *dirSet, base int, path string, tid int, nofollow bool, links int) (metaTarget, unix.Errno) {
	var t metaTarget
	dir, name, slash, e := resolveEntry(base, path, tid)
	if e == unix.EINVAL {
		// ".", "..", "/": a directory, decided on by its own class.
		if e := t.resolve(base, path, tid); e != 0 {
			return t, e
		}
		t.decision = fileClass(s, -1, "", t.fd, &t.st)
		return t, 0
	}
	if e != 0 {
		return t, e
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return t, errnoOf(err)
	}
	if err := unix.Fstat(fd, &t.st); err != nil {
		unix.Close(fd)
		return t, errnoOf(err)
	}
	kind := t.st.Mode & unix.S_IFMT
	if kind == unix.S_IFLNK && (!nofollow || slash) && onProc(dir) {
		// A magic link of /proc (fd/N, cwd, root, exe): the kernel
		// follows it to the file itself, not to its name; so does
		// ResolveAt. The file is decided on as a descriptor's.
		unix.Close(fd)
		if e := t.resolve(dir, name, tid); e != 0 {
			return t, e
		}
		t.decision = f.decideFD(s, t.fd, &t.st)
		return t, 0
	}
	if kind == unix.S_IFLNK && (!nofollow || slash) {
		buf := make([]byte, maxPath)
		n, err := unix.Readlinkat(fd, "", buf)
		unix.Close(fd)
		switch {
		case links >= maxLinks:
			return t, unix.ELOOP
		case err != nil:
			return t, errnoOf(err)
		case n <= 0 || n >= len(buf):
			return t, unix.ENOENT
		}
		target := string(buf[:n])
		if slash {
			target += "/"
		}
		return f.lookupFile(s, dir, target, tid, false, links+1)
	}
	if slash && kind != unix.S_IFDIR {
		unix.Close(fd)
		return t, unix.ENOTDIR
	}
	t.fd = fd
	t.decision = fileClass(s, dir, name, fd, &t.st)
	return t, 0
}

// resolve opens what path leads to from base for thread tid
// (unixgate.ResolveAt, every symlink followed) into t, with its stat.
func (t *metaTarget) resolve(base int, path string, tid int) unix.Errno {
	fd, e := unixgate.ResolveAt(base, path, tid)
	if e != 0 {
		return e
	}
	if err := unix.Fstat(fd, &t.st); err != nil {
		unix.Close(fd)
		return errnoOf(err)
	}
	t.fd = fd
	return 0
}

// decideFD decides on a file known by a descriptor alone: a directory by
// its class; a file without a name (a pipe, a socket, a deleted file, a
// memfd) is allowed; another by the entry the descriptor was opened at,
// as /proc says it, when that entry is still the file.
func (f *rofs) decideFD(s *dirSet, fd int, st *unix.Stat_t) int {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR || s.files[keyOf(st)] {
		return fileClass(s, -1, "", fd, st)
	}
	if st.Nlink == 0 {
		return allowed
	}
	for try := 0; try < 3; try++ {
		p, err := readlinkFD(fd)
		if err != nil {
			return undecided
		}
		if !strings.HasPrefix(p, "/") {
			return allowed // "pipe:[…]", "socket:[…]", "anon_inode:…"
		}
		dir, name, _, ok := split(p)
		if !ok {
			return undecided
		}
		d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var est unix.Stat_t
		if unix.Fstatat(d, name, &est, unix.AT_SYMLINK_NOFOLLOW) == nil && keyOf(&est) == keyOf(st) {
			c := fileClass(s, d, name, fd, st)
			unix.Close(d)
			return c
		}
		unix.Close(d)
	}
	return undecided
}

// onProc says whether the directory open at fd is on a procfs.
func onProc(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

func readlinkFD(fd int) (string, error) {
	buf := make([]byte, maxPath+64)
	n, err := unix.Readlink(procFD(fd), buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// perform makes a metadata call on t, and says its errno (0: done).
func perform(call metaCall, t *metaTarget, a metaArgs, nofollow bool) unix.Errno {
	link := t.st.Mode&unix.S_IFMT == unix.S_IFLNK
	var err error
	switch call.op {
	case metaMode:
		switch {
		case t.byFD:
			err = unix.Fchmod(t.fd, a.mode)
		case link:
			err = unix.EOPNOTSUPP // the kernel's for a symlink's own mode
		default:
			err = unix.Fchmodat(unix.AT_FDCWD, procFD(t.fd), a.mode, 0)
		}
	case metaOwner:
		if t.byFD {
			err = unix.Fchown(t.fd, a.uid, a.gid)
		} else {
			err = unix.Fchownat(t.fd, "", a.uid, a.gid, unix.AT_EMPTY_PATH)
		}
	case metaTimes:
		err = utimensat(t.fd, !t.byFD, a.times)
	case metaSetXattr:
		switch {
		case t.byFD:
			err = unix.Fsetxattr(t.fd, a.name, a.value, a.xflags)
		case link:
			err = unix.EPERM // user.* is the files' and directories' only; the rest needs capabilities
		default:
			err = unix.Setxattr(procFD(t.fd), a.name, a.value, a.xflags)
		}
	case metaRemoveXattr:
		switch {
		case t.byFD:
			err = unix.Fremovexattr(t.fd, a.name)
		case link:
			err = unix.EPERM
		default:
			err = unix.Removexattr(procFD(t.fd), a.name)
		}
	}
	if err != nil {
		return errnoOf(err)
	}
	return 0
}

// utimensat sets the times of fd (the file open there with emptyPath,
// AT_EMPTY_PATH, which takes an O_PATH descriptor and a symlink's own;
// else the descriptor itself, as futimens); times nil: now.
func utimensat(fd int, emptyPath bool, times []unix.Timespec) error {
	var path *byte
	flags := 0
	if emptyPath {
		path = &[]byte{0}[0]
		flags = unix.AT_EMPTY_PATH
	}
	var ts unsafe.Pointer
	if times != nil {
		ts = unsafe.Pointer(&times[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), uintptr(unsafe.Pointer(path)), uintptr(ts), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// accessHandler answers access(2) asking about writes: EROFS where the
// rules refuse a write of the file (a regular file, directory or symlink,
// as the kernel's read-only check; before the permissions), else Continue.
// It is a question: a race only changes the answer, never what a write
// does.
func (f *rofs) accessHandler(call seccomp.AccessCall) usernotif.Handler {
	return func(r *usernotif.Request) usernotif.Reply {
		var flags uint64
		if call.Flags >= 0 {
			flags = r.Args[call.Flags]
		}
		path, ok := rawPath(r, call.Path)
		if !ok || flags&unix.AT_EMPTY_PATH != 0 {
			return usernotif.Continue()
		}
		b, ok := base(r, call.DirFD, path)
		if !ok {
			return usernotif.Continue()
		}
		defer closeBase(b)
		refuse := false
		asCommand(func() {
			t, e := f.lookupFile(&f.c.w, b, path, r.Pid, flags&unix.AT_SYMLINK_NOFOLLOW != 0, 0)
			if e != 0 {
				return
			}
			unix.Close(t.fd)
			switch t.st.Mode & unix.S_IFMT {
			case unix.S_IFREG, unix.S_IFDIR, unix.S_IFLNK:
				refuse = t.decision == refusedRO
			}
		})
		if refuse {
			return usernotif.Fail(unix.EROFS)
		}
		return usernotif.Continue()
	}
}
