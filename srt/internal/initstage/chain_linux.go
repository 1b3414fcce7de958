package initstage

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
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
// from the command's own descriptor or working directory as the kernel
// would resolve it for the calling thread (unixgate.ResolveAt: symlinks
// followed, /proc/self and /dev/fd the thread's), and the inode opened is
// the one decided on; the call is made relative to that descriptor with
// the final name, never following a symlink there (an open of a symlink
// follows it one link at a time and decides again on the entry it leads
// to; what the supervisor may not change there runs, and Landlock decides
// on the target). It runs with the command's credentials: the same user, and a root caller's capabilities
// dropped on the thread that makes it; new entries get the command's
// umask (from /proc/TID/status). An open returns its descriptor through
// SECCOMP_IOCTL_NOTIF_ADDFD, close-on-exec as asked; an open of a FIFO or
// a device, which may block, is made on a goroutine of its own (at most
// maxWaiting; a FIFO's is ended by opening its other end once the caller
// is gone, unblockFIFO).
//
// What it leaves to Landlock (so refused with EACCES in a chain
// directory): O_TMPFILE and O_PATH opens, link with AT_EMPTY_PATH,
// truncate through a symlink, and execve of a new file where reads are
// restricted and a hidden path lies beneath.
//
// Reads: where the command may write a chain directory of the reads (a
// hidden path beneath a writable directory: the dirSet r), what it makes
// there has no read grant; the supervisor is then notified of every open,
// and opens for reading, the same way, what lies there by a name that is
// not hidden (or beneath a directory made there). An open that also
// writes must pass the writes' check too.

// fileKey identifies a directory.
type fileKey struct{ dev, ino uint64 }

func keyOf(st *unix.Stat_t) fileKey { return fileKey{uint64(st.Dev), st.Ino} }

// chainDir is one chain directory.
type chainDir struct {
	path      string
	protected map[string]bool
	// inodes are those of the protected entries that existed at the
	// start: another name of one of them (a case-insensitive directory's
	// ".GIT" for ".git", ext4's or tmpfs's +F, vfat, exfat; a hard link)
	// is refused as the name is.
	inodes map[fileKey]bool
}

// aliases says whether name in the directory open at dir is one of d's
// protected entries by another name.
func (d *chainDir) aliases(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && d.inodes[keyOf(&st)]
}

// dirSet are the chain directories of one kind (writes, or reads), fixed
// before the command starts.
type dirSet struct {
	dirs  map[fileKey]*chainDir
	stops map[fileKey]bool // directories under a protected name of a chain directory
	roots map[fileKey]bool // directories Landlock grants the kind on (their subtree)
	files map[fileKey]bool // the other files Landlock grants the kind on
	devs  map[uint64]bool  // the devices of the chain directories
}

// chainSet is what the supervisor knows.
type chainSet struct {
	w dirSet // the chain directories of the writes
	// r are the chain directories of the reads that the command may write
	// (a hidden path beneath a writable directory): what appears there
	// has no read grant. Empty: Landlock grants every read the rules
	// allow of what the command makes.
	r dirSet
	// umask0 is the init stage's umask, which the kernel applies to what
	// the supervisor makes (the command's, unless it changed its own).
	umask0 uint32
	// waiting holds a token per open waiting on a thread of its own
	// (maxWaiting).
	waiting chan struct{}
}

// noNSWriteRoots and noNSReadRoots are the paths Landlock grants writes,
// and reads, on (restrictNoNS).
var noNSWriteRoots, noNSReadRoots []string

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

// registerChains reads the chain directories from fd (none: 0), records
// them, and registers the supervisor's handlers where there are any. The
// read-only supervisor (rofs_linux.go) decides with what it records.
func registerChains(arch seccomp.Arch, fd int) (*chainSet, error) {
	var list []Chain
	if fd > 0 {
		f := os.NewFile(uintptr(fd), "chains")
		data, err := readAllLimited(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if list, err = DecodeChains(data); err != nil {
			return nil, err
		}
	}
	c := newChainSet(list, noNSWriteRoots, noNSReadRoots)
	if len(c.w.dirs) == 0 && len(c.r.dirs) == 0 {
		return c, nil
	}
	for _, n := range seccomp.ChainNotify(len(c.r.dirs) > 0) {
		nr, ok := arch.Number(n.Syscall)
		if !ok {
			continue
		}
		if err := supervisor.Stack(n, nr, c.handler(chainCalls[n.Syscall])); err != nil {
			return nil, err
		}
	}
	debug("chain supervisor: %d chain directories (%d protected directories, %d write roots); of the reads: %d (%d hidden directories, %d read roots)",
		len(c.w.dirs), len(c.w.stops), len(c.w.roots), len(c.r.dirs), len(c.r.stops), len(c.r.roots))
	return c, nil
}

// newChainSet records the chain directories of list and the directories
// of the roots of each kind. A path that cannot be opened is left out:
// nothing is added there.
func newChainSet(list []Chain, writeRoots, readRoots []string) *chainSet {
	c := &chainSet{w: newDirSet(writeRoots), r: newDirSet(readRoots), waiting: make(chan struct{}, maxWaiting)}
	for _, l := range list {
		set := &c.w
		if l.Reads {
			set = &c.r
		}
		fd, err := unix.Open(l.Path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			// The same directory twice (by two paths, or listed again)
			// protects the names of both.
			d := set.dirs[keyOf(&st)]
			if d == nil {
				d = &chainDir{path: l.Path, protected: map[string]bool{}, inodes: map[fileKey]bool{}}
			}
			for _, n := range l.Protected {
				d.protected[n] = true
				var s unix.Stat_t
				if unix.Fstatat(fd, n, &s, unix.AT_SYMLINK_NOFOLLOW) == nil {
					d.inodes[keyOf(&s)] = true
					if s.Mode&unix.S_IFMT == unix.S_IFDIR {
						set.stops[keyOf(&s)] = true
					}
				}
			}
			set.dirs[keyOf(&st)] = d
			set.devs[uint64(st.Dev)] = true
		}
		unix.Close(fd)
	}
	c.umask0 = uint32(unix.Umask(0o22))
	unix.Umask(int(c.umask0))
	return c
}

func newDirSet(roots []string) dirSet {
	s := dirSet{dirs: map[fileKey]*chainDir{}, stops: map[fileKey]bool{}, roots: map[fileKey]bool{}, files: map[fileKey]bool{}, devs: map[uint64]bool{}}
	for _, p := range roots {
		// As Landlock took them (landlock.grantPath): a symlink is
		// granted nothing.
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			s.roots[keyOf(&st)] = true
		case unix.S_IFLNK:
		default:
			s.files[keyOf(&st)] = true
		}
	}
	return s
}

// The classes of a directory, for one kind (writes, or reads).
const (
	clsNone  = iota // not allowed by the rules, or not known to be: Landlock decides
	clsChain        // a chain directory: its protected names are refused
	clsBelow        // beneath a chain directory, with no Landlock grant: all of it allowed
	clsRoot         // beneath a Landlock grant: Landlock allows it
)

// maxWalk bounds the walk up a directory's ".." entries.
const maxWalk = 256

// classify tells the class of the directory open at fd (and, for a chain
// directory, which). With near, a directory on a device without chain
// directories is clsNone at once: a directory beneath a chain directory
// that Landlock grants nothing is on the chain directory's device (it was
// made or moved there; a mount beneath is an entry at the start, and
// granted, or protected).
func (c *dirSet) classify(fd int, near bool) (int, *chainDir) {
	cls, chain, _ := c.class(fd, near)
	return cls, chain
}

// class is classify that also says whether the class is known: false when
// the walk stopped short (a directory it could not stat or go up from,
// maxWalk levels, or near's shortcut), where clsNone only means
// undecided. A known clsNone is a directory the rules refuse writes
// beneath (a protected directory, or "/" reached with no grant on the
// way).
func (c *dirSet) class(fd int, near bool) (int, *chainDir, bool) {
	cur := fd
	defer func() {
		if cur != fd {
			unix.Close(cur)
		}
	}()
	for level := 0; level < maxWalk; level++ {
		var st unix.Stat_t
		if unix.Fstat(cur, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return clsNone, nil, false
		}
		k := keyOf(&st)
		if d := c.dirs[k]; d != nil {
			if level == 0 {
				return clsChain, d, true
			}
			return clsBelow, nil, true
		}
		if c.stops[k] {
			return clsNone, nil, true
		}
		if c.roots[k] {
			return clsRoot, nil, true
		}
		if near && !c.devs[uint64(st.Dev)] {
			return clsNone, nil, false
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return clsNone, nil, false
		}
		var ust unix.Stat_t
		if unix.Fstat(up, &ust) != nil || keyOf(&ust) == k {
			unix.Close(up)
			return clsNone, nil, true // "/"
		}
		if cur != fd {
			unix.Close(cur)
		}
		cur = up
	}
	return clsNone, nil, false
}

// entry is one directory entry a call names, its directory opened, and
// classified for writes (cls, chain) and, where asked, for reads.
type entry struct {
	dir    int // O_PATH
	name   string
	slash  bool // the path ended in "/"
	cls    int
	chain  *chainDir
	rcls   int
	rchain *chainDir
}

func (e *entry) close() {
	if e != nil && e.dir >= 0 {
		unix.Close(e.dir)
	}
}

// changeable says whether the supervisor may make, remove or rename e.
func (e *entry) changeable() bool {
	return supervised(e.cls, e.chain, e.name) && !(e.cls == clsChain && e.chain.aliases(e.dir, e.name))
}

// supervised says whether the supervisor may act on name in a directory
// of class cls: in a chain directory, a name that is not protected;
// beneath one, any.
func supervised(cls int, chain *chainDir, name string) bool {
	switch cls {
	case clsChain:
		return !chain.protected[name]
	case clsBelow:
		return true
	}
	return false
}

// writable says whether e may be changed by the rules at all, by the
// supervisor or by Landlock.
func (e *entry) writable() bool { return e.changeable() || e.cls == clsRoot }

// readableHere says whether the supervisor may open e for reading (a
// name in a chain directory of the reads that is not hidden, or beneath
// one).
func (e *entry) readableHere() bool {
	return supervised(e.rcls, e.rchain, e.name) && !(e.rcls == clsChain && e.rchain.aliases(e.dir, e.name))
}
