package initstage

import (
	"sync"
	"time"
)

// reporter sends violations to srt from a goroutine of its own, so that a
// handler never waits for srt: a handler queues (report), and when the
// queue is full the violation is counted and dropped.
type reporter struct {
	mu      sync.Mutex
	queue   chan pending
	closed  bool
	dropped int
	done    chan struct{}
	// resolve turns a queued violation into its line ("" to drop it).
	resolve func(pending) string
}

// pending is a violation a handler found: the call's name, the absolute
// path as the command gave it, and whether the call writes.
type pending struct {
	call  string
	path  string
	write bool
}

// reportQueue bounds the violations waiting for the reporter.
const reportQueue = 256

func newReporter(resolve func(pending) string) *reporter {
	r := &reporter{queue: make(chan pending, reportQueue), done: make(chan struct{}), resolve: resolve}
	go r.run()
	return r
}

func (r *reporter) report(p pending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	select {
	case r.queue <- p:
	default:
		r.dropped++
	}
}

func (r *reporter) run() {
	defer close(r.done)
	for p := range r.queue {
		if line := r.resolve(p); line != "" {
			reportViolation(line) // cut to MaxViolation
		}
	}
}

// finish stops taking violations and waits, at most a while, until the
// queued ones are sent: MsgExited must come after them.
func (r *reporter) finish(wait time.Duration) {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.queue)
	}
	dropped := r.dropped
	r.mu.Unlock()
	select {
	case <-r.done:
	case <-time.After(wait):
	}
	if dropped > 0 {
		debug("%d filesystem violations were not reported: they came faster than srt took them", dropped)
	}
}
