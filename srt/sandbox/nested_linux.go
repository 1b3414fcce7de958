package sandbox

// An srt inside an srt sandbox of the Landlock backend (docs/architecture.md,
// "An srt inside an srt"). The outer domain lets its command bind only
// exposeLoopbackPorts, so an srt run there cannot listen for its proxies.
// Landlock decides bind and connect, not accept on a socket bound already:
// the outer srt listens on two spare ports of 127.0.0.1 for it, lets its
// command connect to them, and queues them (SCM_RIGHTS) on a Unix socket
// whose other end the command inherits, named in ListenersVar. The srt
// inside that reads the socket first takes them and sends a lease back;
// when the lease ends (its command done, or that srt gone) the outer srt
// offers them again. The outer srt
// keeps its copies, never accepting on them, so that the ports stay bound
// to nobody else until its command ends.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// The messages on the socket: the offer (with the listeners), and the
// lease an srt inside sends once it took them: one end of a Unix socket
// whose other end it holds while it uses them. When that end closes (its
// command is done, or the srt is gone, killed included) the outer srt
// offers the listeners again, to the next srt run in the sandbox.
const (
	sparesOffer = "srt-landlock-listeners 1"
	sparesLease = "srt-landlock-listeners lease"
)

// spares are the listeners an outer srt offers its command: its copies
// (held until the command ends, never accepted on), its end of the
// socket that carries them and the command's.
type spares struct {
	files  []*os.File
	ports  proxyPorts
	rights []byte
	conn   *net.UnixConn
	end    *os.File
	done   chan struct{} // closed when serve returns
	watch  sync.WaitGroup

	mu     sync.Mutex
	lease  net.Conn // the lease watched (one at a time), or nil
	closed bool

	offerMu sync.Mutex // one offer at a time
	// endID is the command's end (its device and inode): sent back as
	// a lease, srt would read its own offers away.
	endID [2]uint64
}

// offerSpares listens on two spare ports of the host's loopback and
// offers the listeners on a new Unix socket; the command inherits its
// other end (spares.end).
func offerSpares() (*spares, error) {
	files, ports, err := hostListeners()
	if err != nil {
		return nil, err
	}
	s := &spares{files: files, ports: ports, done: make(chan struct{})}
	fail := func(err error) (*spares, error) {
		close(s.done)
		s.close()
		return nil, fmt.Errorf("sandbox: the spare listeners for an srt inside: %w", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	s.end = os.NewFile(uintptr(pair[1]), "srt-landlock-listeners")
	s.endID = fdID(pair[1])
	ours := os.NewFile(uintptr(pair[0]), "srt-landlock-listeners")
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return fail(err)
	}
	s.conn = fc.(*net.UnixConn)
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	s.rights = unix.UnixRights(fds...)
	if err := s.offer(); err != nil {
		return fail(err)
	}
	go s.serve()
	return s, nil
}

// offer queues the listeners for the next srt inside, unless an offer
// is queued still, unread: the command may end leases as fast as it
// sends them, and offers piling up in a queue it never reads would block
// a goroutine of srt each (TestReviewNestllLeaseFlood).
func (s *spares) offer() error {
	s.offerMu.Lock()
	defer s.offerMu.Unlock()
	if rc, err := s.conn.SyscallConn(); err == nil {
		queued := 0
		rc.Control(func(fd uintptr) { queued, _ = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
		if queued > 0 {
			return nil
		}
	}
	_, _, err := s.conn.WriteMsgUnix([]byte(sparesOffer), s.rights, nil)
	return err
}

// serve watches the leases srt inside send, one at a time, until the
// command's end is closed (or close closes srt's). Every other
// descriptor sent to srt is closed unused.
func (s *spares) serve() {
	defer close(s.done)
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4*16))
	for {
		n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
		var fds []int
		if cms, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
			for _, cm := range cms {
				if got, err := unix.ParseUnixRights(&cm); err == nil {
					fds = append(fds, got...)
				}
			}
		}
		if err == nil && n > 0 && string(buf[:n]) == sparesLease && len(fds) == 1 && s.watchLease(fds[0]) {
			fds = nil
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
		// An empty message (which Go reads as io.EOF) is no end: srt
		// holds the command's end itself until close, which closes its
		// own first (a hang-up is the end).
		if err != nil && !(errors.Is(err, io.EOF) && !s.hungUp()) {
			return
		}
	}
}

// hungUp says whether srt's end of the socket is hung up (or fails).
func (s *spares) hungUp() bool {
	rc, err := s.conn.SyscallConn()
	if err != nil {
		return true
	}
	hup := true
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err == nil {
			hup = n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
		}
	})
	return hup
}

// fdID is the device and inode of the file fd refers to.
func fdID(fd int) [2]uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return [2]uint64{}
	}
	return [2]uint64{uint64(st.Dev), st.Ino}
}

// watchLease watches the lease fd (a Unix socket) until its other end
// closes, then offers the listeners again; false (fd left open) when fd
// is no Unix socket or the command's end of srt's, another lease is watched, or srt closes.
func (s *spares) watchLease(fd int) bool {
	if d, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || d != unix.AF_UNIX || fdID(fd) == s.endID {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease != nil || s.closed {
		return false
	}
	f := os.NewFile(uintptr(fd), "srt-landlock-lease")
	c, err := net.FileConn(f)
	f.Close() // (FileConn has a copy)
	if err != nil {
		return true
	}
	s.lease = c
	s.watch.Add(1)
	go func() {
		defer s.watch.Done()
		b := make([]byte, 16)
		for {
			if _, err := c.Read(b); err != nil {
				break
			}
		}
		c.Close()
		s.mu.Lock()
		s.lease = nil
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			s.offer()
		}
	}()
	return true
}

// close closes the outer srt's copies and its end of the socket.
func (s *spares) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	if s.lease != nil {
		s.lease.Close()
	}
	s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		<-s.done
	}
	s.watch.Wait()
	for _, f := range s.files {
		f.Close()
	}
	if s.end != nil {
		s.end.Close()
	}
}

// inherited is the outer srt's offer, as this process found it in its
// environment (ListenersVar) at the first command that needed it.
var inherited struct {
	sync.Mutex
	checked bool
	end     int    // the socket's descriptor; -1: none
	why     string // why none
	busy    bool   // a command of this process holds the listeners
	lease   int    // this process's end of its lease, while busy; -1: none
}

// errNoSpares starts the refusals of an srt that can neither bind nor
// take listeners.
const errNoSpares = "srt cannot listen for its network proxies here: binding a port on 127.0.0.1 is refused (%v), as inside the Landlock backend's sandbox of another srt, "

// landlockListeners are the listeners of a command's proxies under the
// Landlock backend: on ports of its own, or, where binding is refused (an
// srt inside an srt Landlock sandbox), the spares the outer srt offers;
// inherited says which (giveBack returns them).
func landlockListeners() (files []*os.File, ports proxyPorts, fromOuter bool, err error) {
	files, ports, err = hostListeners()
	if err == nil || !errors.Is(err, unix.EACCES) {
		return files, ports, false, err
	}
	bindErr := unix.EACCES
	inherited.Lock()
	defer inherited.Unlock()
	if !inherited.checked {
		inherited.checked, inherited.end, inherited.lease = true, -1, -1
		v, ok := os.LookupEnv(initstage.ListenersVar)
		os.Unsetenv(initstage.ListenersVar)
		if !ok {
			inherited.why = fmt.Sprintf("%s is not set: an srt Landlock sandbox offers spare listeners to the srt run directly in it, and that srt offers none to its own command (nesting under the Landlock backend goes one srt deep), or a program between them dropped the variable; run this srt directly in the outer sandbox, or the outer srt under the bubblewrap backend", initstage.ListenersVar)
		} else if fd, err := inheritedSocket(v); err != nil {
			inherited.why = fmt.Sprintf("%s=%q names no offer of an outer srt: %v", initstage.ListenersVar, v, err)
		} else {
			inherited.end = fd
		}
	}
	switch {
	case inherited.end < 0:
		return nil, proxyPorts{}, false, fmt.Errorf(errNoSpares+"and %s: %w", bindErr, inherited.why, ErrCannotSandbox)
	case inherited.busy:
		return nil, proxyPorts{}, false, fmt.Errorf(errNoSpares+"and the spare listeners the outer srt offers serve another command of this srt already: run one command at a time here, or the outer srt under the bubblewrap backend: %w", bindErr, ErrCannotSandbox)
	}
	files, ports, err = takeSpares(inherited.end)
	if err != nil {
		return nil, proxyPorts{}, false, fmt.Errorf(errNoSpares+"and the spare listeners the outer srt offers cannot be taken: %v: %w", bindErr, err, ErrCannotSandbox)
	}
	inherited.busy, inherited.lease = true, sendLease(inherited.end)
	return files, ports, true, nil
}

// sendLease sends the outer srt one end of a new Unix socket and returns
// the other (-1 when that fails: then the listeners are not offered again
// after this srt, which still runs).
func sendLease(end int) int {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer unix.Close(pair[0])
	if err := unix.Sendmsg(end, []byte(sparesLease), unix.UnixRights(pair[0]), nil, unix.MSG_DONTWAIT); err != nil {
		unix.Close(pair[1])
		return -1
	}
	return pair[1]
}

// giveBack ends this process's lease of the listeners (its copies are
// closed already: the egress's), so that the outer srt offers them to
// the next srt inside; and waits (a while) until the offer is there, so
// that an srt run next in the sandbox finds it.
func giveBack() {
	inherited.Lock()
	defer inherited.Unlock()
	if !inherited.busy {
		return
	}
	inherited.busy = false
	if inherited.lease < 0 {
		return
	}
	unix.Close(inherited.lease)
	inherited.lease = -1
	waitReadableFD(inherited.end, 2*time.Second)
}

// offerWait is how long an srt inside waits for the outer srt's offer.
const offerWait = time.Second

// waitReadableFD waits until fd is readable (or hung up), at most d.
func waitReadableFD(fd int, d time.Duration) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for left := time.Until(deadline); left > 0; left = time.Until(deadline) {
		if _, err := unix.Poll(fds, int(left/time.Millisecond)+1); err != unix.EINTR {
			return
		}
	}
}

// inheritedSocket is the descriptor ListenersVar's value v names, checked
// to be a Unix sequenced-packet socket (an outer srt's), and made
// close-on-exec: no program this srt starts inherits it.
func inheritedSocket(v string) (int, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 || fd > 1<<20 {
		return -1, errors.New("not a descriptor number")
	}
	dom, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err1 != nil || err2 != nil || dom != unix.AF_UNIX || typ != unix.SOCK_SEQPACKET {
		return -1, fmt.Errorf("descriptor %d is not the socket an outer srt passed: a program between them closed it (as Python's subprocess does unless given pass_fds) and the number may have been reused", fd)
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// takeSpares takes the listeners offered on the socket fd and checks
// them.
func takeSpares(fd int) ([]*os.File, proxyPorts, error) {
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4*16))
	// The offer may be on its way: the lease of an srt inside that just
	// ended (killed, say), which the outer srt answers with a new offer.
	waitReadableFD(fd, offerWait)
	n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, proxyPorts{}, errors.New("another srt in this sandbox holds them (they serve one srt inside at a time; the outer srt offers them again once that srt is done): wait for it to end and run this srt again, or run the outer srt under the bubblewrap backend")
	case err == nil && n == 0:
		return nil, proxyPorts{}, errors.New("the outer srt is gone")
	case err != nil:
		return nil, proxyPorts{}, err
	}
	var fds []int
	if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, cm := range cms {
			if got, err := unix.ParseUnixRights(&cm); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	files := make([]*os.File, len(fds))
	for i, f := range fds {
		files[i] = os.NewFile(uintptr(f), "srt-proxy-listener")
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if string(buf[:n]) != sparesOffer || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeAll()
		return nil, proxyPorts{}, errors.New("the socket carries something else than an outer srt's listeners")
	}
	ports, err := checkSpares(files)
	if err != nil {
		closeAll()
		return nil, proxyPorts{}, err
	}
	return files, ports, nil
}

// checkSpares checks the listeners an outer srt passed: TCP, listening,
// on the loopback, on two ports (the first one's the HTTP proxy's), each
// with a listener on 127.0.0.1.
func checkSpares(files []*os.File) (proxyPorts, error) {
	var order []int
	v4 := map[int]bool{}
	for _, f := range files {
		fd := int(f.Fd())
		typ, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		on, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		sa, err3 := unix.Getsockname(fd)
		if err1 != nil || err2 != nil || err3 != nil || typ != unix.SOCK_STREAM || on != 1 {
			return proxyPorts{}, errors.New("a descriptor passed is not a listening TCP socket")
		}
		var addr netip.Addr
		var port int
		switch a := sa.(type) {
		case *unix.SockaddrInet4:
			addr, port = netip.AddrFrom4(a.Addr), a.Port
		case *unix.SockaddrInet6:
			addr, port = netip.AddrFrom16(a.Addr), a.Port
		default:
			return proxyPorts{}, errors.New("a descriptor passed is not a TCP socket")
		}
		if !addr.IsLoopback() {
			return proxyPorts{}, fmt.Errorf("a listener passed is on %s, not on the loopback", addr)
		}
		// On 127.0.0.1 itself, where the command's "localhost" leads
		// (a listener on 127.0.0.2 would leave 127.0.0.1's port to
		// whoever binds it).
		if addr == netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
			v4[port] = true
		}
		seen := false
		for _, p := range order {
			seen = seen || p == port
		}
		if !seen {
			order = append(order, port)
		}
	}
	if len(order) != 2 || !v4[order[0]] || !v4[order[1]] {
		return proxyPorts{}, fmt.Errorf("%d listeners on %d ports were passed, where two ports of 127.0.0.1 are needed", len(files), len(order))
	}
	return proxyPorts{order[0], order[1]}, nil
}

// insideLandlockSrt reports whether this srt runs inside the Landlock
// backend's sandbox of another srt: the outer srt offered it spare
// listeners (its variable is set, or was when this srt took them).
func insideLandlockSrt() bool {
	inherited.Lock()
	defer inherited.Unlock()
	if inherited.checked {
		return inherited.end >= 0
	}
	_, ok := os.LookupEnv(initstage.ListenersVar)
	return ok
}
