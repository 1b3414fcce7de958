package link

import (
	"sync"
	"time"
)

// clock times a link's verdict waits with one timer. Every wait lasts the
// same (the link's timeout), so they end in the order they start: the
// timer is armed for the oldest wait still running and, when it fires,
// ends the waits that are over and re-arms for the next. A timer of its
// own per wait would, on every request, be the earliest of its P's and
// wake a sleeping thread (the network poller) to re-arm.
type clock struct {
	d time.Duration

	mu    sync.Mutex
	waits []*countdown // oldest first; finished ones are dropped lazily
	timer *time.Timer
	armed bool
}

// countdown is one verdict wait: expired is closed when it runs out before
// stop.
type countdown struct {
	deadline time.Time
	expired  chan struct{}
	done     bool // stopped or expired; under clock.mu
}

func newClock(d time.Duration) *clock { return &clock{d: d} }

// start begins a wait.
func (c *clock) start() *countdown {
	w := &countdown{deadline: time.Now().Add(c.d), expired: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waits) > 0 && c.waits[0].done {
		c.waits[0] = nil
		c.waits = c.waits[1:]
	}
	c.waits = append(c.waits, w)
	if !c.armed {
		c.arm(c.d)
	}
	return w
}

// stop ends a wait that no longer needs its timer.
func (c *clock) stop(w *countdown) {
	c.mu.Lock()
	w.done = true
	c.mu.Unlock()
}

// fire ends the waits that are over and re-arms for the oldest one left.
func (c *clock) fire() {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = false
	for len(c.waits) > 0 {
		w := c.waits[0]
		if !w.done {
			if left := w.deadline.Sub(now); left > 0 {
				c.arm(left)
				return
			}
			w.done = true
			close(w.expired)
		}
		c.waits[0] = nil
		c.waits = c.waits[1:]
	}
}

func (c *clock) arm(d time.Duration) {
	c.armed = true
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.fire)
	} else {
		c.timer.Reset(d)
	}
}
