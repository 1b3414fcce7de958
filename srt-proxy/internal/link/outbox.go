package link

import (
	"fmt"
	"sync"
)

// outbox holds the encoded messages waiting to be written to the decider.
// It never blocks a sender: a decider that stops reading makes it grow,
// and past the link's queue limit the link dies ("not reading: N bytes
// queued") instead of making requests wait on a full pipe. The bytes
// counted are those queued plus the message being written.
type outbox struct {
	mu     sync.Mutex
	msgs   [][]byte
	queued int64
	wake   chan struct{} // one pending wake-up for the writer
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

// push queues msg and returns the bytes now queued.
func (o *outbox) push(msg []byte) int64 {
	o.mu.Lock()
	o.msgs = append(o.msgs, msg)
	o.queued += int64(len(msg))
	n := o.queued
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return n
}

// take removes and returns every queued message (nil when there is none).
func (o *outbox) take() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	msgs := o.msgs
	o.msgs = nil
	return msgs
}

// done uncounts a message once it has been written.
func (o *outbox) done(msg []byte) {
	o.mu.Lock()
	o.queued -= int64(len(msg))
	o.mu.Unlock()
}

// send queues an encoded message for the writer. A link that is dead, or
// dies of this message (the decider is not reading), refuses it.
func (l *Link) send(msg []byte) error {
	if l.Err() != nil {
		return l.unavailable()
	}
	if n := l.out.push(msg); n > l.maxQueued {
		l.kill(fmt.Errorf("not reading: %d bytes queued", n))
		return l.unavailable()
	}
	return nil
}

// writeLoop writes queued messages in order until the link dies.
func (l *Link) writeLoop() {
	for {
		select {
		case <-l.dead:
			return
		case <-l.out.wake:
		}
		for _, msg := range l.out.take() {
			err := l.w.Write(msg)
			l.out.done(msg)
			if err != nil {
				l.kill(writeError(err))
				return
			}
		}
	}
}
