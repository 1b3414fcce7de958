package netns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Namespace is a prepared network namespace, from srt's side.
type Namespace struct {
	cmd     *exec.Cmd
	channel *os.File
	stderr  bytes.Buffer

	// Set by Wait.
	Proxy, Capture, DNS []*os.File // the listening sockets made inside
	Net                 *os.File   // the network namespace
	User                *os.File   // its user namespace; nil for root

	rules     chan string   // why the rules failed, or ""
	exited    chan struct{} // closed once the helper is reaped
	closeOnce sync.Once
}

// The capabilities the helper keeps in its user namespace (ambient, so
// that they survive its exec): configuring the namespace and its rules,
// and binding the DNS port.
const (
	capNetBindService = 10
	capNetAdmin       = 12
)

// helperEnv is the helper's environment: none. Only this package's tests
// set one, which their helper reads to reach its test hooks.
var helperEnv []string

// Start starts the helper exe (srt-init, or a program with its hook) for
// spec. It returns at once; Wait returns what it made.
func Start(exe string, spec Spec) (*Namespace, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "netns"), os.NewFile(uintptr(fds[1]), "netns")
	defer theirs.Close()
	n := &Namespace{channel: ours, rules: make(chan string, 1)}
	cmd := exec.Command(exe, spec.Args()...)
	cmd.Args[0] = "srt-netns"
	cmd.Env = append([]string{}, helperEnv...)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = &n.stderr
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if uid := os.Getuid(); uid != 0 {
		gid := os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.AmbientCaps = []uintptr{capNetAdmin, capNetBindService}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("cannot start the network namespace helper: %w", err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		close(n.exited)
	}()
	return n, nil
}

// Wait waits for the namespace and its sockets.
func (n *Namespace) Wait() error {
	head := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(64*4))
	hn, oobn, err := n.recvmsg(head, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || hn == 0 {
		return n.failed(err)
	}
	files, perr := rights(oob[:oobn])
	if perr != nil || hn != 4 || head[0] != msgListeners {
		closeAll(files)
		return fmt.Errorf("network namespace helper: unexpected message %q", head[:hn])
	}
	np, nc, nd := int(head[1]), int(head[2]), int(head[3])
	want := np + nc + nd + 1
	if os.Getuid() != 0 {
		want++
	}
	if len(files) < want-1 || len(files) > want {
		closeAll(files)
		return fmt.Errorf("network namespace helper: %d descriptors, expected %d", len(files), want)
	}
	n.Proxy, files = files[:np], files[np:]
	n.Capture, files = files[:nc], files[nc:]
	n.DNS, files = files[:nd], files[nd:]
	n.Net, files = files[0], files[1:]
	if len(files) > 0 {
		n.User = files[0]
	}
	go n.readRules()
	return nil
}

// RulesTimeout bounds how long the command waits for the capture rules.
var RulesTimeout = 20 * time.Second

// Rules delivers, once, why the capture rules could not be installed ("":
// they are in place). The helper has exited when it does.
func (n *Namespace) Rules() <-chan string { return n.rules }

func (n *Namespace) readRules() {
	// A helper that hangs (a kernel that never answers) must not hold the
	// command forever: it is ended, and the rules reported failed.
	timer := time.AfterFunc(RulesTimeout, func() { n.cmd.Process.Kill() })
	buf := make([]byte, 4096)
	m, _, err := n.recvmsg(buf, nil, 0)
	<-n.exited
	if !timer.Stop() {
		n.rules <- fmt.Sprintf("installing them took more than %v", RulesTimeout)
		return
	}
	switch {
	case err == nil && m > 0 && buf[0] == msgRules:
		n.rules <- string(buf[1:m])
	default:
		n.rules <- "the network namespace helper ended without installing them: " + n.why()
	}
}

// recvmsg receives one message on the channel. It holds the descriptor
// while it waits: a Close meanwhile (a command released before the helper
// reported) kills the helper, which ends the wait, and the descriptor is
// closed only once the read is over, so the read never lands on its
// number reused by another open.
func (n *Namespace) recvmsg(p, oob []byte, flags int) (m, oobn int, err error) {
	rc, err := n.channel.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	rerr := rc.Read(func(fd uintptr) bool {
		m, oobn, _, _, err = unix.Recvmsg(int(fd), p, oob, flags)
		return true // a blocking socket: the call waited
	})
	if err == nil {
		err = rerr
	}
	return m, oobn, err
}

// failed is the error of a helper that ended before sending its sockets.
func (n *Namespace) failed(err error) error {
	<-n.exited
	if err != nil {
		return fmt.Errorf("network namespace helper: %w", err)
	}
	return errors.New(n.why())
}

// why is what the helper said on stderr, or how it ended.
func (n *Namespace) why() string {
	if s := strings.TrimSpace(n.stderr.String()); s != "" {
		return strings.TrimPrefix(s, "srt: ")
	}
	if n.cmd.ProcessState != nil {
		return "network namespace helper: " + n.cmd.ProcessState.String()
	}
	return "network namespace helper: no answer"
}

// HostListeners is a sandbox's network without a namespace (srt's
// Landlock backend): the proxies' listening sockets, which srt made on
// the host's loopback, and nothing else. Close closes them.
func HostListeners(proxy []*os.File) *Namespace {
	return &Namespace{Proxy: proxy}
}

// CloseSockets closes srt's copies of the listening sockets (once they
// are handed over, or cannot be): with no copy left, a connection made
// inside is refused at once instead of waiting in a backlog nobody
// serves. Close closes them too.
func (n *Namespace) CloseSockets() {
	closeAll(n.Proxy)
	closeAll(n.Capture)
	closeAll(n.DNS)
}

// Close closes srt's descriptors of the namespace and ends the helper if
// it still runs.
func (n *Namespace) Close() {
	n.closeOnce.Do(func() {
		if n.cmd != nil {
			n.channel.Close()
			n.cmd.Process.Kill() // an error only says it has exited
		}
		closeAll(n.Proxy)
		closeAll(n.Capture)
		closeAll(n.DNS)
		if n.Net != nil {
			n.Net.Close()
		}
		if n.User != nil {
			n.User.Close()
		}
	})
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// rights extracts the descriptors an SCM_RIGHTS message carries.
func rights(oob []byte) ([]*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var out []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			return out, err
		}
		for _, fd := range fds {
			out = append(out, os.NewFile(uintptr(fd), "netns"))
		}
	}
	return out, nil
}
