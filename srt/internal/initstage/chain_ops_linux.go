package initstage

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// The chain supervisor's handlers (chain_linux.go): each decides on the
// directory it opened and performs the call, or lets it run.

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
	// An open that writes nothing is Landlock's unless the supervisor
	// opens for reading too (it is notified of every open then, or when
	// the filesystem observer wants every open); O_PATH and O_TMPFILE ones
	// are Landlock's always.
	if call.op == opOpen && (flags&seccomp.OpenWriteFlags == 0 && len(c.r.dirs) == 0 || flags&(unix.O_PATH|unix.O_TMPFILE&^unix.O_DIRECTORY) != 0) {
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
		e, ok := c.open(b1, path, r.Pid, !two, call.op == opOpen && c.readsNeeded(flags))
		if !ok {
			return
		}
		defer e.close()
		if two {
			e2, ok := c.open(b2, path2, r.Pid, false, false)
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
		if call.op == opOpen && !c.opens(e, flags) || call.op != opOpen && !e.changeable() {
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
		if e.slash && flags&unix.O_CREAT != 0 {
			return usernotif.Reply{}, false // the kernel's EISDIR
		}
		return c.openFile(e, int(flags), uint32(r.Args[call.mode]), umask, r, 0)
	case opMkdir:
		// The kernel's mkdir keeps no set-id bit of the mode; nor does
		// the mode given back (a set-id bit there would make the fchmod
		// fail, under the command's seccomp rules, and leave the umask's).
		m, fix, needFix := c.perm(uint32(r.Args[call.mode])&(0o777|unix.S_ISVTX), umask)
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
			// On the node made, never through a symlink swapped in
			// meanwhile (fchmodat follows one).
			if fd, kind, err := lookup(e); err == nil {
				if kind == mode&unix.S_IFMT || mode&unix.S_IFMT == 0 && kind == unix.S_IFREG {
					unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), fix, 0)
				}
				unix.Close(fd)
			}
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

// readsNeeded says whether an open with flags reads, where the supervisor
// may have to open for reading (chain directories of the reads exist).
func (c *chainSet) readsNeeded(flags uint64) bool {
	return len(c.r.dirs) > 0 && flags&unix.O_ACCMODE != unix.O_WRONLY
}

// opens says whether the supervisor performs an open of e with flags:
// when the rules allow all it asks (to write: e may be changed, by the
// supervisor or beneath a Landlock grant; to read: e may be read, the
// same way, or reads need no supervisor), and Landlock alone would not.
func (c *chainSet) opens(e *entry, flags uint64) bool {
	writes := flags&seccomp.OpenWriteFlags != 0
	reads := c.readsNeeded(flags)
	allowW, landlockW := !writes || e.writable(), !writes || e.cls == clsRoot
	allowR, landlockR := !reads || e.readableHere() || e.rcls == clsRoot, !reads || e.rcls == clsRoot
	return allowW && allowR && !(landlockW && landlockR)
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
func (c *chainSet) openFile(e *entry, flags int, mode, umask uint32, r *usernotif.Request, links int) (usernotif.Reply, bool) {
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
		if err == nil && e.slash && kind != unix.S_IFDIR {
			// "name/" names a directory: through a symlink, or the
			// kernel's ENOTDIR.
			unix.Close(p)
			return usernotif.Reply{}, false
		}
		if err == unix.ENOENT && flags&unix.O_CREAT != 0 {
			reply, done, again := create()
			if again {
				continue
			}
			return reply, done
		}
		if err == nil && kind == unix.S_IFLNK {
			return c.follow(e, p, flags, mode, umask, r, links)
		}
		if err != nil {
			return usernotif.Reply{}, false // the kernel says what it is
		}
		reopen := "/proc/self/fd/" + strconv.Itoa(p)
		flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW
		if kind != unix.S_IFREG && kind != unix.S_IFDIR {
			// A FIFO's open waits for the other end, a device's may
			// block: not in the supervisor's loop, and no more than
			// maxWaiting at a time (each holds a thread); past that the
			// call runs as the command's own.
			select {
			case c.waiting <- struct{}{}:
			default:
				unix.Close(p)
				return usernotif.Reply{}, false
			}
			return usernotif.Reply{Later: func() usernotif.Reply {
				done := make(chan struct{})
				var watch sync.WaitGroup
				if kind == unix.S_IFIFO {
					watch.Add(1)
					go func() {
						defer watch.Done()
						unblockFIFO(r, reopen, flags, done)
					}()
				}
				reply := usernotif.Continue()
				asCommand(func() {
					fd, err := unix.Open(reopen, flags, 0)
					if err != nil {
						reply = usernotif.Fail(errnoOf(err))
						return
					}
					reply, _ = give(fd)
				})
				close(done)
				watch.Wait()
				unix.Close(p)
				<-c.waiting
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

// maxWaiting bounds the opens that wait on threads of their own (of
// FIFOs and devices, which may block).
const maxWaiting = 256

// unblockFIFO watches an open of the FIFO at reopen (with flags) that may
// wait for the other end, until done: once the call it was made for is
// gone (the command's thread killed while it waited), it opens the other
// end itself without waiting, which ends the open, and closes it when
// done. Otherwise every killed opener would leave a thread of the init
// stage waiting for good.
func unblockFIFO(r *usernotif.Request, reopen string, flags int, done <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	other := unix.O_WRONLY
	if flags&unix.O_ACCMODE == unix.O_WRONLY {
		other = unix.O_RDONLY
	}
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if r.Valid() {
			continue
		}
		fd := -1
		asCommand(func() {
			if f, err := unix.Open(reopen, other|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
				fd = f
			}
		})
		if fd >= 0 {
			<-done
			unix.Close(fd)
			return
		}
	}
}

// follow opens what the symlink at e (open at p, which it closes) names:
// the entry the target leads to, when the supervisor may change it;
// otherwise the call runs, and Landlock decides on the target (allowed
// beneath a grant, refused on a protected path).
func (c *chainSet) follow(e *entry, p int, flags int, mode, umask uint32, r *usernotif.Request, links int) (usernotif.Reply, bool) {
	buf := make([]byte, maxPath)
	n, err := unix.Readlinkat(p, "", buf)
	unix.Close(p)
	if flags&unix.O_NOFOLLOW != 0 || links >= maxLinks || err != nil || n <= 0 || n >= len(buf) {
		return usernotif.Reply{}, false
	}
	next, ok := c.open(e.dir, string(buf[:n]), r.Pid, true, c.readsNeeded(uint64(flags)))
	if !ok {
		return usernotif.Reply{}, false
	}
	defer next.close()
	if next.slash || !c.opens(next, uint64(flags)) {
		return usernotif.Reply{}, false
	}
	return c.openFile(next, flags, mode, umask, r, links+1)
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
