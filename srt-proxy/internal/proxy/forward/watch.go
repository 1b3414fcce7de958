package forward

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// defaultWatchDelay is how long an exchange waits on its upstream before
// the proxy starts to watch for its client going away.
const defaultWatchDelay = time.Second

// clientWatch ends an exchange whose client goes away while the proxy
// waits on the upstream, for its answer or for more of the response: the
// upstream leg is cut, so that an upstream that never answers does not
// hold the exchange, its connections and its goroutines for ever. Nothing
// else reads the client meanwhile (the request has been read to its end),
// so the watch peeks at the client's buffered reader: bytes the client
// sends (a pipelined request) stay there for the next exchange, and end
// the watch, as the client is still there.
//
// The watch begins only after a delay (Env.WatchDelay): most upstreams
// answer first, and those exchanges pay for a timer, not for a read.
type clientWatch struct {
	h   *Conn
	cut func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	done    chan struct{} // closed when the peek has returned; nil: not begun
	gone    atomic.Bool
}

// watchClient starts watching h's client for the exchange whose upstream
// leg cut ends.
func (h *Conn) watchClient(cut func()) *clientWatch {
	w := &clientWatch{h: h, cut: cut}
	w.mu.Lock()
	w.timer = time.AfterFunc(h.watchDelay(), w.peek)
	w.mu.Unlock()
	return w
}

// peek runs on the timer's goroutine. It waits for the client without a
// deadline (a stall limit set for the request's body must not pass for the
// client leaving); stop sets one in the past to end it.
func (w *clientWatch) peek() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	done := make(chan struct{})
	w.done = done
	// Under the lock: stop's deadline, set once it has the lock, comes after.
	w.h.Client.Raw.SetReadDeadline(time.Time{})
	w.mu.Unlock()
	defer close(done)
	_, err := w.h.BR.Peek(1)
	w.mu.Lock()
	stopped := w.stopped
	w.mu.Unlock()
	if err != nil && !stopped && !errors.Is(err, os.ErrDeadlineExceeded) {
		w.gone.Store(true)
		w.cut()
	}
}

// stop ends the watch, and reports whether the client went away (and the
// upstream leg was cut). The client's read deadline is cleared: the
// exchange's own reads set theirs. A nil watch reports false.
func (w *clientWatch) stop() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	done := w.done
	w.mu.Unlock()
	if done != nil {
		raw := w.h.Client.Raw
		raw.SetReadDeadline(time.Unix(1, 0)) // ends the peek
		<-done
		raw.SetReadDeadline(time.Time{})
	}
	return w.gone.Load()
}

// watchDelay is Env.WatchDelay, or defaultWatchDelay.
func (h *Conn) watchDelay() time.Duration {
	if h.Env.WatchDelay > 0 {
		return h.Env.WatchDelay
	}
	return defaultWatchDelay
}
