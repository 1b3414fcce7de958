package link

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"unsafe"

	"github.com/srt-sandbox/decider/protocol"
)

// outbox holds the framed messages waiting to be written to the decider.
// It never blocks a sender: a decider that stops reading makes it grow,
// and past the link's queue limit the link dies ("not reading: N bytes
// queued") instead of making requests wait on a full pipe. The bytes
// counted are those queued plus those being written.
//
// One writer at a time owns the stream. On a socket that is the sender of
// a message when nobody else is writing: it writes what the socket takes
// at once, in its own goroutine, and hands the rest, if any, to the writer
// goroutine, which waits for the socket. Otherwise it is the writer
// goroutine, woken for each batch: a hand-over costs a thread wake-up,
// which on a request's path costs more than the write.
type outbox struct {
	mu     sync.Mutex
	frames [][]byte
	queued int64
	busy   bool          // a writer owns the stream
	wake   chan struct{} // hands the stream to the writer goroutine
}

func newOutbox() *outbox { return &outbox{wake: make(chan struct{}, 1)} }

// Who writes a frame push has queued.
const (
	writtenByOwner = iota // the writer at work takes it
	writeNow              // the sender owns the stream now
	wakeWriter            // the writer goroutine is to be woken
)

// push queues frame and returns the bytes now queued and who writes it;
// direct says the sender may write itself.
func (o *outbox) push(frame []byte, direct bool) (int64, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.frames = append(o.frames, frame)
	o.queued += int64(len(frame))
	who := writtenByOwner
	if !o.busy {
		o.busy = true
		who = wakeWriter
		if direct {
			who = writeNow
		}
	}
	return o.queued, who
}

// next takes the queued frames for the stream's owner. When there are none
// it returns nil, and the owner no longer owns the stream.
func (o *outbox) next() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	frames := o.frames
	o.frames = nil
	if len(frames) == 0 {
		o.busy = false
		return nil
	}
	return frames
}

// putBack returns frames not written yet to the front of the queue.
func (o *outbox) putBack(frames [][]byte) {
	o.mu.Lock()
	o.frames = append(frames, o.frames...)
	o.mu.Unlock()
}

// written uncounts n bytes once they have been written.
func (o *outbox) written(n int) {
	o.mu.Lock()
	o.queued -= int64(n)
	o.mu.Unlock()
}

func (o *outbox) wakeWriter() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// send frames an encoded message and queues it for the decider. A link
// that is dead, or dies of this message (it cannot be framed, or the
// decider is not reading), refuses it.
func (l *Link) send(msg []byte) error {
	if l.Err() != nil {
		return l.unavailable()
	}
	frame, err := protocol.Frame(l.cfg.Framing, msg)
	if err != nil {
		l.kill(writeError(err))
		return l.unavailable()
	}
	n, who := l.out.push(frame, l.direct != nil)
	if n > l.maxQueued {
		l.kill(fmt.Errorf("not reading: %d bytes queued", n))
		return l.unavailable()
	}
	switch who {
	case writeNow:
		l.writeDirect()
	case wakeWriter:
		l.out.wakeWriter()
	}
	return nil
}

// writeDirect writes the queued frames as far as the socket takes them
// without waiting; the rest goes to the writer goroutine.
func (l *Link) writeDirect() {
	for frames := l.out.next(); frames != nil; frames = l.out.next() {
		for i, f := range frames {
			n, err := l.tryWrite(f)
			l.out.written(n)
			if errors.Is(err, syscall.EAGAIN) {
				l.out.putBack(append([][]byte{f[n:]}, frames[i+1:]...))
				l.out.wakeWriter()
				return
			}
			if err != nil {
				l.kill(writeError(err))
				return
			}
		}
	}
}

// tryWrite writes b to the socket without waiting (MSG_DONTWAIT, whatever
// the descriptor's mode): EAGAIN when the socket would not take all of it
// (n says how much it took).
func (l *Link) tryWrite(b []byte) (n int, err error) {
	cerr := l.direct.Control(func(fd uintptr) {
		for n < len(b) {
			m, _, e := syscall.Syscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n),
				sendFlags, 0, 0)
			switch {
			case e == syscall.EINTR:
			case e != 0:
				err = e
				return
			case m == 0:
				err = io.ErrShortWrite
				return
			default:
				n += int(m)
			}
		}
	})
	if cerr != nil {
		return n, cerr
	}
	return n, err
}

// writeLoop writes the frames handed to it, waiting for the stream, until
// the link dies.
func (l *Link) writeLoop() {
	for {
		select {
		case <-l.dead:
			return
		case <-l.out.wake:
		}
		for frames := l.out.next(); frames != nil; frames = l.out.next() {
			for _, f := range frames {
				_, err := l.stream.Write(f)
				l.out.written(len(f))
				if err != nil {
					l.kill(writeError(err))
					return
				}
			}
		}
	}
}

// directConn returns the raw connection of rw when a sender may write to
// it without waiting: a stream socket (an inherited descriptor, blocking
// or not, or a net.Conn). nil otherwise (a pipe, net.Pipe): every frame
// then goes through the writer goroutine.
func directConn(rw io.ReadWriteCloser) syscall.RawConn {
	sc, ok := rw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	typ := -1
	rc.Control(func(fd uintptr) {
		if t, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TYPE); err == nil {
			typ = t
		}
	})
	if typ != syscall.SOCK_STREAM {
		return nil
	}
	return rc
}
