//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// The states of a Cmd's run (runState.state).
const (
	unstarted = iota // Start or Attach not called yet
	following        // Attach ran: the channel's reader closes Done
	ended            // Start failed or Release came first: Done is closed
)

// runState is how far a Cmd's run has come, and bubblewrap's reaping,
// which Wait and Release share: whichever comes first reaps it, the other
// gets its result.
type runState struct {
	mu       sync.Mutex
	state    int
	waitOnce sync.Once
	waitErr  error
}

// follow moves an unstarted command to following; false when it is not
// unstarted.
func (c *Cmd) follow() bool {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	if c.life.state != unstarted {
		return false
	}
	c.life.state = following
	return true
}

// followed reports whether Attach ran (and with it serveListeners).
func (c *Cmd) followed() bool {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	return c.life.state == following
}

// startable says whether Start may start the command.
func (c *Cmd) startable() bool {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	return c.life.state == unstarted
}

// endUnstarted closes Done (and lets Wait return) for a command that will
// never start: its Start failed, or it was released first.
func (c *Cmd) endUnstarted() {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	if c.life.state != unstarted || c.done == nil {
		return
	}
	c.life.state = ended
	close(c.done)
	close(c.readerDone)
}

// errNotStartable is Start's answer after a failed Start or a Release.
var errNotStartable = errors.New("sandbox: the command cannot start: an earlier Start failed, or it was released")

// reap waits for bubblewrap once, for Wait and Release alike.
func (c *Cmd) reap() error {
	c.life.waitOnce.Do(func() { c.life.waitErr = c.Cmd.Wait() })
	return c.life.waitErr
}

// reapOnRelease reaps bubblewrap when Start started it and no Wait has:
// no process srt started may outlive the host (an unreaped one is a
// zombie, and then the zombie of whatever reaps orphans). The channel is
// closed by now, so the init stage ends the sandbox and bubblewrap exits;
// one that has not within reapTimeout is killed.
func (c *Cmd) reapOnRelease() {
	if c.Cmd == nil || c.Cmd.Process == nil {
		return // never started, or started by the caller (Argv), who waits for it
	}
	t := time.AfterFunc(reapTimeout, func() { c.Cmd.Process.Kill() })
	defer t.Stop()
	c.reap()
}

const reapTimeout = 5 * time.Second

// Output runs the command and returns its standard output, as
// exec.Cmd.Output does: Stdout must be unset; with Stderr unset, an
// *exec.ExitError carries the end of the command's standard error.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("sandbox: Stdout already set")
	}
	var stdout bytes.Buffer
	c.Stdout = &stdout
	var stderr *prefixSuffix
	if c.Stderr == nil {
		stderr = &prefixSuffix{n: 32 << 10}
		c.Stderr = stderr
	}
	err := c.Run()
	var ee *exec.ExitError
	if stderr != nil && errors.As(err, &ee) {
		ee.Stderr = stderr.bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error together, as exec.Cmd.CombinedOutput does.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("sandbox: Stdout already set")
	}
	if c.Stderr != nil {
		return nil, errors.New("sandbox: Stderr already set")
	}
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// prefixSuffix keeps the first and the last n bytes written to it.
type prefixSuffix struct {
	n              int
	prefix, suffix []byte
	skipped        int64
}

func (w *prefixSuffix) Write(p []byte) (int, error) {
	size := len(p)
	if room := w.n - len(w.prefix); room > 0 {
		k := min(room, len(p))
		w.prefix = append(w.prefix, p[:k]...)
		p = p[k:]
	}
	w.suffix = append(w.suffix, p...)
	if over := len(w.suffix) - w.n; over > 0 {
		w.skipped += int64(over)
		w.suffix = append(w.suffix[:0], w.suffix[over:]...)
	}
	return size, nil
}

func (w *prefixSuffix) bytes() []byte {
	if w.skipped == 0 {
		return append(w.prefix, w.suffix...)
	}
	out := append([]byte{}, w.prefix...)
	out = append(out, "\n... omitting "+strconv.FormatInt(w.skipped, 10)+" bytes ...\n"...)
	return append(out, w.suffix...)
}
