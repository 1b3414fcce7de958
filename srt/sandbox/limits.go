//go:build linux

package sandbox

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/limits"
	"github.com/srt-sandbox/srt/settings"
)

// sandboxLimits decides how the settings' limits are enforced for the
// Manager's backend (bubblewrap: its own user and mount namespaces; the
// Landlock backend: neither), or refuses one this machine cannot enforce.
// Nothing has run yet.
func (m *Manager) sandboxLimits(l settings.Limits) (*limits.Applied, *limits.Cgroup, error) {
	own := m.backend != settings.BackendLandlock
	offer := limits.Prober{}.Probe(own, own, l.MemoryMiB > 0, l.Processes > 0)
	a, err := limits.Decide(l, offer)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return a, offer.Cgroup, nil
}

// limitRun is what a command's limits need while it runs.
type limitRun struct {
	applied  *limits.Applied
	leaf     *limits.Leaf
	settings settings.Limits
	// wallHit: the command ran past wallSeconds and srt stopped it.
	wallHit atomic.Bool
}

// WallTimeExceeded reports whether srt stopped the command because it ran
// past limits.wallSeconds.
func (c *Cmd) WallTimeExceeded() bool { return c.limits != nil && c.limits.wallHit.Load() }

// watchWall stops the command once it has run past wallSeconds: SIGTERM to
// it, SIGKILL to it WallGrace later, and, should the sandbox still be
// there after as long again, to bubblewrap (the init stage dies with it,
// and every process of the sandbox with the init stage).
func (c *Cmd) watchWall() {
	wall := c.limits.applied.Wall
	select {
	case <-c.done:
		return
	case <-time.After(wall):
	}
	c.limits.wallHit.Store(true)
	fmt.Fprintf(c.m.opts.Warnings, "srt: the command ran past limits.wallSeconds (%d s) and was stopped (SIGTERM, then SIGKILL after %s)\n", c.limits.settings.WallSeconds, limits.WallGrace)
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGKILL} {
		c.Signal(sig)
		select {
		case <-c.done:
			return
		case <-time.After(limits.WallGrace):
		}
	}
	if c.Cmd != nil && c.Cmd.Process != nil {
		c.Cmd.Process.Kill()
	}
}

// endLimits says what the cgroup's limits did to the sandbox, and removes
// its leaf. The sandbox is gone.
func (c *Cmd) endLimits() {
	if c.limits == nil || c.limits.leaf == nil {
		return
	}
	oom, refused := c.limits.leaf.Events()
	if oom > 0 {
		fmt.Fprintf(c.m.opts.Warnings, "srt: the sandbox reached limits.memoryMiB (%d MiB): the kernel killed %d of its processes\n", c.limits.settings.MemoryMiB, oom)
	}
	if refused > 0 {
		fmt.Fprintf(c.m.opts.Warnings, "srt: the sandbox reached limits.processes (%d): %d forks failed\n", c.limits.settings.Processes, refused)
	}
	if err := c.limits.leaf.Remove(); err != nil {
		fmt.Fprintf(c.m.opts.Warnings, "srt: warning: cannot remove the sandbox's cgroup: %v\n", err)
	}
}
