// Package unixgate decides, path by path, which Unix sockets a sandboxed
// command may connect and send to (network.allowUnixSockets on Linux). It
// registers handlers for connect, sendto (with an address), sendmsg and
// sendmmsg with the init stage's seccomp user-notification server
// (usernotif), and performs each of those calls itself on the command's
// own socket:
//
//   - the address is read once from the command's memory and only that
//     copy is used, so changing the memory afterwards changes nothing;
//   - a Unix socket path is opened (O_PATH) the way the command's connect
//     would resolve it, symlinks followed, /proc/self its own (resolve),
//     and the decision is taken on the inode reached: its path (as
//     /proc/self/fd names it) is a listed path or beneath a listed
//     directory (a pinned entry: it is the inode pinned), or it is a
//     socket bound inside the sandbox's own network namespace (sock_diag);
//     then the call is made to "/proc/self/fd/N", that very inode, so a
//     symlink swapped in after the check cannot redirect it;
//   - anything else (other address families, no address) is performed as
//     given, on the copy.
//
// A refusal fails with EACCES and is reported as "deny unix-connect PATH"
// or "deny unix-send PATH".
package unixgate

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/internal/usernotif"
)

// Gate is the policy: the allowed paths, and where refusals are reported.
type Gate struct {
	// Allowed are the listed paths.
	Allowed []Entry
	// Report is called with each refusal's violation line.
	Report func(line string)
	// HostNetwork says the command has no network namespace of its own
	// (srt's Landlock backend). Then sock_diag here lists the host's
	// sockets, so none is taken for one the sandbox bound itself; and an
	// abstract address, which the gate's own connect would reach from
	// outside the command's Landlock scope, is refused as that scope
	// refuses one bound outside (EPERM).
	HostNetwork bool
	// AllowAll allows every path (network.allowUnixSockets lists none,
	// and the connects are the gate's only so that none runs as the
	// command made it: the Landlock backend's network gate); the gate
	// then connects to a path with the command's credentials
	// (AsCommand), which decide as they would for the command.
	AllowAll bool
	// SkipConnect leaves connect(2) out of Register: another handler
	// takes every connect and gives the Unix sockets' to ConnectOn.
	SkipConnect bool
	// AsCommand, when set, runs a function with the command's
	// credentials (the init stage's capabilities dropped): the connects
	// and sends the gate performs on a socket that is not a Unix socket
	// (netlink: connect to a multicast group, a destination port id), and
	// the sends that carry control messages (SCM_CREDENTIALS: a pid, uid
	// and gid other than the caller's need CAP_SYS_ADMIN, CAP_SETUID,
	// CAP_SETGID), are checked by the kernel against the caller's
	// capabilities, which must be the command's, not the gate's.
	AsCommand func(func()) bool
}

// as runs f, as the command (AsCommand) when cmd; false when it could
// not. cmd: a socket of a domain other than AF_UNIX, or a message with
// control messages (SCM_CREDENTIALS: the pid, uid and gid claimed are
// checked against the caller's capabilities).
func (g *Gate) as(cmd bool, f func()) bool {
	if !cmd || g.AsCommand == nil {
		f()
		return true
	}
	return g.AsCommand(f)
}

// Entry is one listed path.
type Entry struct {
	// Path is absolute, without symlinks: a socket file there, or beneath
	// it (not Pinned), may be reached, if its link count is 1 (a hard link
	// has other names srt cannot know).
	Path string
	// Pinned: the command could put another socket at Path, so only the
	// socket file ID, its change time Changed (ns), may be reached there
	// (nil: none may), by that path and not beneath it.
	Pinned  bool
	ID      *FileID
	Changed int64
}

// FileID identifies a file by its device and inode numbers, as stat(2)
// reports them.
type FileID struct{ Dev, Ino uint64 }

// Limits on what is copied from the command for one call.
const (
	maxAddr    = 128     // sizeof(struct sockaddr_storage)
	maxIov     = 1024    // UIO_MAXIOV
	maxData    = 4 << 20 // a datagram above this fails with EMSGSIZE, a stream send is short
	maxControl = 1 << 20 // above the kernel's optmem_max anyway
	// struct msghdr and struct mmsghdr (LP64).
	msghdrSize = 56
	mmsgSize   = 64
)

// Register adds the gate's handlers to s.
func (g *Gate) Register(s *usernotif.Server) error {
	for _, h := range []struct {
		n  seccomp.Notify
		nr int
		h  usernotif.Handler
	}{
		{seccomp.Notify{Syscall: "connect"}, unix.SYS_CONNECT, g.connect},
		{seccomp.Notify{Syscall: "sendto", NonNull: true, Arg: 4}, unix.SYS_SENDTO, g.sendto},
		{seccomp.Notify{Syscall: "sendmsg"}, unix.SYS_SENDMSG, g.sendmsg},
		{seccomp.Notify{Syscall: "sendmmsg"}, unix.SYS_SENDMMSG, g.sendmmsg},
	} {
		if h.nr == unix.SYS_CONNECT && g.SkipConnect {
			continue
		}
		if err := s.Register(h.n, h.nr, h.h); err != nil {
			return err
		}
	}
	return nil
}

// ErrnoOf turns an error of a handler into the errno the command should
// see (for the handlers of the init stage's other supervisors too).
func ErrnoOf(err error) unix.Errno { return errnoOf(err) }

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, usernotif.ErrGone):
		return unix.ESRCH // nobody reads it
	}
	return unix.EIO
}

// Socket duplicates the command's descriptor fd and reads its domain.
func Socket(r *usernotif.Request, fd uint64) (sock, domain int, err error) {
	sock, err = r.FD(int(int32(fd)))
	if err != nil {
		return -1, 0, err
	}
	if domain, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil {
		unix.Close(sock)
		return -1, 0, err
	}
	return sock, domain, nil
}

// socketOf is Socket, and the socket's type.
func socketOf(r *usernotif.Request, fd uint64) (sock, domain, typ int, err error) {
	if sock, domain, err = Socket(r, fd); err != nil {
		return -1, 0, 0, err
	}
	if typ, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		unix.Close(sock)
		return -1, 0, 0, err
	}
	return sock, domain, typ, nil
}

// ReadAddr copies an address of length n (an int in the call) at addr:
// at most sockaddr_storage's size, as the kernel takes.
func ReadAddr(r *usernotif.Request, addr, n uint64) ([]byte, error) { return readAddr(r, addr, n) }

// readAddr copies an address of length n (an int in the call) at addr.
func readAddr(r *usernotif.Request, addr, n uint64) ([]byte, error) {
	l := int(int32(n))
	if l < 0 {
		return nil, unix.EINVAL
	}
	if l > maxAddr {
		return nil, unix.EINVAL
	}
	if addr == 0 {
		if l == 0 {
			return nil, nil
		}
		return nil, unix.EFAULT
	}
	return r.Read(addr, l)
}

func (g *Gate) connect(r *usernotif.Request) usernotif.Reply {
	sock, domain, _, err := socketOf(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	defer unix.Close(sock)
	return g.ConnectOn(r, sock, domain)
}

// ConnectOn answers the connect r on sock, the command's socket that the
// caller took from it (of family domain), which stays the caller's to
// close: for a supervisor that decides the other families' connects
// (Register with SkipConnect).
func (g *Gate) ConnectOn(r *usernotif.Request, sock, domain int) usernotif.Reply {
	sa, err := readAddr(r, r.Args[1], r.Args[2])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	var done func()
	var e unix.Errno
	routed := func() { sa, done, e = g.route(r, domain, sa, "unix-connect") }
	if g.AllowAll && domain == unix.AF_UNIX {
		// Every path allowed: the path is resolved as the command
		// (AsCommand), not with the init stage's capabilities (a root
		// caller's CAP_DAC_READ_SEARCH would search a directory the
		// command may not), and /proc's magic links of other processes
		// are refused (ownProc in resolve).
		if !g.as(true, routed) {
			return usernotif.Fail(unix.EPERM)
		}
	} else {
		routed()
	}
	if e != 0 {
		return usernotif.Fail(e)
	}
	defer done()
	var p unsafe.Pointer
	if len(sa) > 0 {
		p = unsafe.Pointer(&sa[0])
	}
	if !g.as(domain != unix.AF_UNIX || g.AllowAll, func() {
		_, _, e = unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(sa)))
	}) {
		return usernotif.Fail(unix.EPERM)
	}
	if e != 0 {
		return usernotif.Fail(e)
	}
	return usernotif.Reply{}
}

func (g *Gate) sendto(r *usernotif.Request) usernotif.Reply {
	sa, err := readAddr(r, r.Args[4], r.Args[5])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	sock, domain, typ, err := socketOf(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	defer unix.Close(sock)
	n := r.Args[2]
	if n > maxData {
		if typ != unix.SOCK_STREAM {
			return usernotif.Fail(unix.EMSGSIZE)
		}
		n = maxData
	}
	var data []byte
	if n > 0 {
		if data, err = r.Read(r.Args[1], int(n)); err != nil {
			return usernotif.Fail(errnoOf(err))
		}
	}
	sa, done, e := g.route(r, domain, sa, "unix-send")
	if e != 0 {
		return usernotif.Fail(e)
	}
	defer done()
	var dp, sp unsafe.Pointer
	if len(data) > 0 {
		dp = unsafe.Pointer(&data[0])
	}
	if len(sa) > 0 {
		sp = unsafe.Pointer(&sa[0])
	}
	var sent uintptr
	if !g.as(domain != unix.AF_UNIX, func() {
		sent, _, e = unix.Syscall6(unix.SYS_SENDTO, uintptr(sock), uintptr(dp), uintptr(len(data)), uintptr(uint32(r.Args[3])), uintptr(sp), uintptr(len(sa)))
	}) {
		return usernotif.Fail(unix.EPERM)
	}
	if e != 0 {
		return usernotif.Fail(e)
	}
	return usernotif.Reply{Val: int64(sent)}
}

func (g *Gate) sendmsg(r *usernotif.Request) usernotif.Reply {
	sock, domain, typ, err := socketOf(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	defer unix.Close(sock)
	if r.Args[1] == 0 {
		return usernotif.Fail(unix.EFAULT)
	}
	hdr, err := r.Read(r.Args[1], msghdrSize)
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	n, e := g.sendOne(r, sock, domain, typ, hdr, uint32(r.Args[2]))
	if e != 0 {
		return usernotif.Fail(e)
	}
	return usernotif.Reply{Val: int64(n)}
}

func (g *Gate) sendmmsg(r *usernotif.Request) usernotif.Reply {
	sock, domain, typ, err := socketOf(r, r.Args[0])
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	defer unix.Close(sock)
	vlen := uint32(r.Args[2])
	if vlen > maxIov {
		vlen = maxIov
	}
	if vlen == 0 {
		return usernotif.Reply{}
	}
	vec, err := r.Read(r.Args[1], int(vlen)*mmsgSize)
	if err != nil {
		return usernotif.Fail(errnoOf(err))
	}
	sent := 0
	for i := 0; i < int(vlen); i++ {
		m := vec[i*mmsgSize : (i+1)*mmsgSize]
		n, e := g.sendOne(r, sock, domain, typ, m[:msghdrSize], uint32(r.Args[3]))
		if e != 0 {
			if sent == 0 {
				return usernotif.Fail(e)
			}
			break
		}
		var l [4]byte
		binary.LittleEndian.PutUint32(l[:], uint32(n))
		if err := r.Write(r.Args[1]+uint64(i*mmsgSize+msghdrSize), l[:]); err != nil {
			if sent == 0 {
				return usernotif.Fail(errnoOf(err))
			}
			break
		}
		sent++
	}
	return usernotif.Reply{Val: int64(sent)}
}

// sendOne performs one sendmsg whose struct msghdr (as the command laid
// it out) is hdr.
func (g *Gate) sendOne(r *usernotif.Request, sock, domain, typ int, hdr []byte, flags uint32) (int, unix.Errno) {
	m, err := readMessage(hdr, typ == unix.SOCK_STREAM, r.Read)
	if err != nil {
		return 0, errnoOf(err)
	}
	var passed []int
	defer func() {
		for _, fd := range passed {
			unix.Close(fd)
		}
	}()
	if len(m.control) > 0 {
		if passed, err = translateRights(r, m.control); err != nil {
			return 0, errnoOf(err)
		}
	}
	sa, done, e := g.route(r, domain, m.name, "unix-send")
	if e != 0 {
		return 0, e
	}
	defer done()
	var msg unix.Msghdr
	var iov unix.Iovec
	if len(m.data) > 0 {
		iov = unix.Iovec{Base: &m.data[0], Len: uint64(len(m.data))}
		msg.Iov, msg.Iovlen = &iov, 1
	}
	if len(sa) > 0 {
		msg.Name, msg.Namelen = &sa[0], uint32(len(sa))
	}
	if len(m.control) > 0 {
		msg.Control, msg.Controllen = &m.control[0], uint64(len(m.control))
	}
	var n uintptr
	if !g.as(domain != unix.AF_UNIX || len(m.control) > 0, func() {
		n, _, e = unix.Syscall(unix.SYS_SENDMSG, uintptr(sock), uintptr(unsafe.Pointer(&msg)), uintptr(flags))
	}) {
		return 0, unix.EPERM
	}
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

// translateRights replaces, in control, each descriptor an SCM_RIGHTS
// message passes by this process's duplicate of it, and returns the
// duplicates (closed once sent).
func translateRights(r *usernotif.Request, control []byte) ([]int, error) {
	slots, e := rightsSlots(control)
	if e != 0 {
		return nil, e
	}
	var dups []int
	for _, p := range slots {
		fd := int32(binary.LittleEndian.Uint32(control[p:]))
		dup, err := r.FD(int(fd))
		if err != nil {
			for _, d := range dups {
				unix.Close(d)
			}
			return nil, err
		}
		dups = append(dups, dup)
		binary.LittleEndian.PutUint32(control[p:], uint32(dup))
	}
	return dups, nil
}

// route decides a Unix address: it returns the address to use (the same,
// or "/proc/self/fd/N" of the socket file decided on, with done closing
// N), or an errno. Sockets of other families get their address as given:
// the kernel refuses a Unix address on them.
func (g *Gate) route(r *usernotif.Request, domain int, sa []byte, op string) ([]byte, func(), unix.Errno) {
	nothing := func() {}
	if domain != unix.AF_UNIX {
		return sa, nothing, 0
	}
	kind, path, e := parseUnixAddr(sa)
	if e != 0 {
		return nil, nothing, e
	}
	if kind == addrAbstract && g.HostNetwork {
		if g.Report != nil {
			g.Report("deny " + op + " @" + string(path))
		}
		return nil, nothing, unix.EPERM
	}
	if kind != addrPath {
		// Abstract: the sandbox has a network namespace of its own, where
		// the host's abstract sockets do not exist, and Landlock's scope
		// (Linux 6.12) refuses the ones bound outside the sandbox's domain.
		// Unnamed or not a Unix address: the kernel refuses it.
		return sa, nothing, 0
	}
	name := g.absolute(r, string(path))
	// Without namespaces (HostNetwork) /proc shows the host's processes:
	// a magic link of one outside the sandbox (its root, cwd, fd/N) is
	// refused, as Landlock's ptrace scope refuses the
	// command, rather than followed into another mount namespace, where
	// a listed path names another socket.
	fd, e := openAsTarget(r, string(path), g.AllowAll || g.HostNetwork)
	if e != 0 {
		return nil, nothing, e
	}
	closeFD := func() { unix.Close(fd) }
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		closeFD()
		return nil, nothing, errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		closeFD()
		return nil, nothing, unix.ECONNREFUSED // what connect says of a file that is no socket
	}
	real, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	allowed, why := g.decide(real, st)
	switch {
	case allowed:
	case !g.HostNetwork && boundInside(st):
		allowed = true // a socket the sandbox bound itself
	case why == "" && real != name:
		why = " (resolves to " + real + ")"
	}
	if !allowed {
		if g.Report != nil {
			g.Report("deny " + op + " " + name + why)
		}
		closeFD()
		return nil, nothing, unix.EACCES
	}
	out := make([]byte, 2, 2+len("/proc/self/fd/")+12)
	binary.LittleEndian.PutUint16(out, unix.AF_UNIX)
	out = append(out, "/proc/self/fd/"+strconv.Itoa(fd)...)
	out = append(out, 0)
	return out, closeFD, 0
}

// decide says whether the socket file st, whose path is real, is one a
// listed entry allows, and if not, why, when an entry names it.
func (g *Gate) decide(real string, st unix.Stat_t) (bool, string) {
	if !strings.HasPrefix(real, "/") {
		return false, "" // "socket:[N]", an unreachable name
	}
	if g.AllowAll {
		return true, ""
	}
	why := ""
	for _, e := range g.Allowed {
		switch {
		case e.Pinned && real != e.Path:
		case e.Pinned && e.ID == nil:
			why = " (srt found no socket its daemon bound there when the sandbox started, and the sandbox may write where it lies: it cannot tell a host daemon's socket from one the command moved there)"
		case e.Pinned && (st.Dev != e.ID.Dev || st.Ino != e.ID.Ino || st.Ctim.Nano() != e.Changed):
			why = " (not the socket that was there when the sandbox started, which srt pinned because the sandbox may write where it lies: it was replaced)"
		case e.Pinned:
			return true, ""
		case real != e.Path && !strings.HasPrefix(real, e.Path+"/") && e.Path != "/":
		case st.Nlink != 1:
			why = " (a hard link of a socket file, whose other names srt cannot know)"
		default:
			return true, ""
		}
	}
	return false, why
}

// absolute is the path the command named, made absolute against its
// working directory, for messages.
func (g *Gate) absolute(r *usernotif.Request, path string) string {
	if strings.HasPrefix(path, "/") {
		return filepath.Clean(path)
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(r.Pid) + "/cwd")
	if err != nil {
		return path
	}
	return filepath.Join(cwd, path)
}

// openAsTarget opens path with O_PATH as the calling thread's connect
// would resolve it (see resolve).
func openAsTarget(r *usernotif.Request, path string, ownProc bool) (int, unix.Errno) {
	fd, e := resolve(path, r.Pid, r.Valid, ownProc)
	if e == 0 && !r.Valid() {
		unix.Close(fd)
		return -1, unix.ESRCH
	}
	return fd, e
}
