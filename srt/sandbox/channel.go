//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// openChannel makes the socket pair shared with the init stage and opens
// the init stage's executable, in the descriptor order initstage expects.
func (c *Cmd) openChannel(initExe string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "channel")
	theirs := os.NewFile(uintptr(fds[1]), "channel")
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return fmt.Errorf("sandbox: channel: %w", err)
	}
	exe, err := os.Open(initExe)
	if err != nil {
		conn.Close()
		theirs.Close()
		return fmt.Errorf("sandbox: init stage executable: %w", err)
	}
	c.channel = conn.(*net.UnixConn)
	c.childEnds = []*os.File{theirs, exe}
	return nil
}

// readChannel follows what the init stage reports: "started", violations,
// answers to connection requests (with their sockets), and "exited" with
// the status.
func (c *Cmd) readChannel() {
	defer close(c.readerDone)
	defer c.closeDone()
	defer c.failConnects()
	var buf []byte
	var fds []*os.File // received descriptors, in order, not yet claimed
	defer func() {
		for _, f := range fds {
			f.Close()
		}
	}()
	b := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*16))
	for {
		n, oobn, _, _, err := c.channel.ReadMsgUnix(b, oob)
		// On an error the counts may be -1 (recvmsg's own return).
		n, oobn = max(n, 0), max(oobn, 0)
		fds = append(fds, receivedFiles(oob[:oobn])...)
		buf = append(buf, b[:n]...)
		for len(buf) > 0 {
			size, done := c.channelMessage(buf, &fds)
			if done {
				return // the last report: stop reading, so Release need not wait for us
			}
			if size == 0 {
				break // incomplete
			}
			buf = buf[size:]
		}
		if err != nil || n == 0 {
			return
		}
	}
}

// channelMessage handles the message at the start of buf: its size (0
// when it has not all arrived), and whether it was the last ("exited").
// An unknown byte is skipped.
func (c *Cmd) channelMessage(buf []byte, fds *[]*os.File) (size int, last bool) {
	switch buf[0] {
	case initstage.MsgStarted:
		c.started = true
		return 1, false
	case initstage.MsgExited:
		if len(buf) < 2 {
			return 0, false
		}
		c.exitCode, c.exited = int(buf[1]), true
		return 2, true
	case initstage.MsgViolation:
		if len(buf) < 3 {
			return 0, false
		}
		n := int(binary.BigEndian.Uint16(buf[1:]))
		if len(buf) < 3+n {
			return 0, false
		}
		// The line may hold a path the command chose (the filesystem
		// observer's): any bytes but NUL.
		c.m.violation(strings.ToValidUTF8(string(buf[3:3+n]), "\uFFFD"), c.user)
		return 3 + n, false
	case initstage.MsgListening:
		if len(buf) < 3 {
			return 0, false
		}
		c.exposeListening(binary.BigEndian.Uint16(buf[1:]))
		return 3, false
	case initstage.MsgConnected:
		if len(buf) < 5 {
			return 0, false
		}
		port, errno := binary.BigEndian.Uint16(buf[1:]), unix.Errno(binary.BigEndian.Uint16(buf[3:]))
		var f *os.File
		if errno == 0 {
			if len(*fds) == 0 {
				errno = unix.EIO // a socket announced and not sent: never expected
			} else {
				f, *fds = (*fds)[0], (*fds)[1:]
			}
		}
		c.connected(port, f, errno)
		return 5, false
	}
	return 1, false
}

// receivedFiles are the descriptors of SCM_RIGHTS messages in oob.
func receivedFiles(oob []byte) []*os.File {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "sandbox socket"))
		}
	}
	return files
}

func (c *Cmd) closeDone() {
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}

// Signal delivers sig to the command's process group inside the sandbox.
func (c *Cmd) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok || s <= 0 || s > 255 {
		return fmt.Errorf("sandbox: cannot forward signal %v", sig)
	}
	if c.released.Load() {
		return errReleased
	}
	_, err := c.channel.Write([]byte{byte(s)})
	return err
}

// errReleased is Signal's answer after Release: the sandbox is gone.
var errReleased = errors.New("sandbox: the command was released: there is nothing to signal")

// Started reports, once Done is closed, whether the command itself started
// inside the sandbox. When it did not, bubblewrap failed to build the
// sandbox.
func (c *Cmd) Started() bool {
	select {
	case <-c.done:
		return c.started
	default:
		return false
	}
}

// Release removes what srt created on the host for the command (the
// placeholders of write-protected paths that did not exist) and closes its
// descriptors. Call it after Wait, or once Done is closed; it is safe to
// call more than once. It reaps bubblewrap when Start started it and Wait
// has not (a command still running is ended first: its sandbox is killed),
// so that no process srt started outlives the host; a command never
// started has Done closed. When the network proxy is still starting for
// the command's first connection, it waits for that (egress's ready
// timeout bounds it) before it closes the sandbox's sockets.
func (c *Cmd) Release() error {
	var err error
	c.once.Do(func() {
		c.released.Store(true)
		c.endUnstarted()
		c.closeExposed()
		for _, f := range c.childEnds {
			f.Close()
		}
		if c.channel != nil {
			c.channel.Close()
		}
		c.reapOnRelease()
		c.endLimits()
		if c.followed() {
			// The sockets may be on their way to srt-proxy (its start
			// takes a while): they are closed once they have gone. The
			// channel is closed, so Done is, and that ends the wait.
			<-c.servedDone
		}
		if c.ns != nil {
			c.ns.Close()
		}
		c.releaseLandlock()
		if c.claim != nil {
			err = c.claim.Release()
		}
		if c.maskKey != nil {
			c.m.releaseMasks(*c.maskKey)
		}
	})
	return err
}
