package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
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

// readChannel follows what the init stage reports: "started", and
// "exited" with the status.
func (c *Cmd) readChannel() {
	defer close(c.readerDone)
	defer c.closeDone()
	var buf []byte
	b := make([]byte, 64)
	for {
		n, err := c.channel.Read(b)
		buf = append(buf, b[:n]...)
		for len(buf) > 0 {
			switch {
			case buf[0] == initstage.MsgStarted:
				c.started = true
				buf = buf[1:]
				continue
			case buf[0] == initstage.MsgExited && len(buf) >= 2:
				c.exitCode, c.exited = int(buf[1]), true
				return // the last report: stop reading, so Release need not wait for us
			}
			break
		}
		if err != nil {
			return
		}
	}
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
		for _, f := range c.childEnds {
			f.Close()
		}
		if c.channel != nil {
			c.channel.Close()
		}
		c.reapOnRelease()
		if c.followed() {
			// The sockets may be on their way to srt-proxy (its start
			// takes a while): they are closed once they have gone. The
			// channel is closed, so Done is, and that ends the wait.
			<-c.servedDone
		}
		if c.ns != nil {
			c.ns.Close()
		}
		if c.claim != nil {
			err = c.claim.Release()
		}
		if c.maskKey != nil {
			c.m.releaseMasks(*c.maskKey)
		}
	})
	return err
}
