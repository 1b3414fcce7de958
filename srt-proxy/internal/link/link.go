package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// DefaultTimeout is how long a request waits for its verdict.
const DefaultTimeout = 5 * time.Second

// idWindow: a verdict for an id this far below the newest is stale and
// dropped, not a violation.
const idWindow = 4096

// maxQueued is how many bytes may wait unread towards the decider before
// the link is declared dead: ⌈64 MiB·4/3⌉ + 32 MiB.
const maxQueued = (64<<20*4+2)/3 + 32<<20

// Lists are the decider's hello (or update) lists.
type Lists struct {
	AllowedDomains, DeniedDomains, DeniedResolvedAddresses []string
}

// Config configures a Link.
type Config struct {
	Framing protocol.Framing
	// OfferExt offers the srt.v1 extension (srt's own mode, line framing).
	OfferExt bool
	// Timeout bounds the wait for each verdict (DefaultTimeout if zero).
	Timeout time.Duration
	// OnUpdate receives the lists of an update message (srt.v1).
	OnUpdate func(Lists)
}

// Link is a live connection to a decider.
type Link struct {
	cfg   Config
	r     *protocol.Reader
	w     *protocol.Writer
	close func() error
	ext   bool
	hello Lists

	nextID atomic.Uint64
	mu     sync.Mutex
	waits  map[uint64]chan protocol.Verdict
	late   map[uint64]bool // timed-out ids whose verdict may still come
	newest uint64

	queue  chan []byte
	queued atomic.Int64

	deadOnce sync.Once
	dead     chan struct{}
	why      error
}

// ErrUnavailable is wrapped by every error Ask returns when the decider
// cannot answer.
var ErrUnavailable = errors.New("request decider")

// Dial says hello over rw and waits for the decider's hello (at most
// helloTimeout). The link is then live until the stream fails or Close.
func Dial(rw io.ReadWriteCloser, cfg Config, helloTimeout time.Duration) (*Link, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	l := &Link{
		cfg: cfg, r: protocol.NewReader(rw, cfg.Framing, protocol.MaxFrame), w: protocol.NewWriter(rw, cfg.Framing),
		close: rw.Close, waits: map[uint64]chan protocol.Verdict{}, late: map[uint64]bool{},
		queue: make(chan []byte, 1024), dead: make(chan struct{}),
	}
	hello := &protocol.ProxyHello{}
	offer := cfg.OfferExt && cfg.Framing == protocol.Line
	if offer {
		hello.Ext = []string{protocol.ExtSRTv1}
	}
	msg, err := protocol.Encode(hello)
	if err != nil {
		return nil, err
	}
	if err := l.w.Write(msg); err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	type result struct {
		h   *protocol.DeciderHello
		err error
	}
	got := make(chan result, 1)
	go func() {
		frame, err := l.r.Read()
		if err != nil {
			got <- result{err: closedOr(err)}
			return
		}
		m, err := protocol.DecodeDeciderMessage(frame, offer)
		if err != nil {
			got <- result{err: err}
			return
		}
		h, ok := m.(*protocol.DeciderHello)
		if !ok {
			got <- result{err: &protocol.ProtocolError{Reason: protocol.ReasonBadHello}}
			return
		}
		got <- result{h: h}
	}()
	select {
	case res := <-got:
		if res.err != nil {
			rw.Close()
			return nil, fmt.Errorf("decider: %w", helloError(res.err))
		}
		l.ext = res.h.HasExt(protocol.ExtSRTv1)
		l.hello = Lists{res.h.AllowedDomains, res.h.DeniedDomains, res.h.DeniedResolvedAddresses}
	case <-time.After(helloTimeout):
		rw.Close()
		return nil, errors.New("decider: no hello")
	}
	go l.readLoop()
	go l.writeLoop()
	return l, nil
}

// helloError names a broken hello as the reference does.
func helloError(err error) error {
	var pe *protocol.ProtocolError
	if errors.As(err, &pe) {
		return errors.New(protocol.ReasonBadHello)
	}
	return err
}

func closedOr(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("decider closed the stream")
	}
	return err
}

// Hello returns the lists of the decider's hello.
func (l *Link) Hello() Lists { return l.hello }

// Ext says whether srt.v1 is in force.
func (l *Link) Ext() bool { return l.ext }

// Dead is closed when the link has died; Err then says why.
func (l *Link) Dead() <-chan struct{} { return l.dead }

// Err is why the link died ("decider closed the stream", a protocol
// reason), or nil while it lives.
func (l *Link) Err() error {
	select {
	case <-l.dead:
		return l.why
	default:
		return nil
	}
}

// Close ends the link.
func (l *Link) Close() error {
	l.kill(errors.New("closed"))
	return nil
}

// kill marks the link dead for good and fails everything waiting.
func (l *Link) kill(why error) {
	l.deadOnce.Do(func() {
		l.why = why
		close(l.dead)
		l.close()
	})
}

// send queues an encoded message for the writer.
func (l *Link) send(msg []byte) error {
	if n := l.queued.Add(int64(len(msg))); n > maxQueued {
		l.kill(fmt.Errorf("not reading: %d bytes queued", n))
	}
	select {
	case <-l.dead:
		return l.unavailable()
	case l.queue <- msg:
		return nil
	}
}

func (l *Link) writeLoop() {
	for {
		select {
		case <-l.dead:
			return
		case msg := <-l.queue:
			err := l.w.Write(msg)
			l.queued.Add(-int64(len(msg)))
			if err != nil {
				l.kill(closedOr(err))
				return
			}
		}
	}
}

func (l *Link) unavailable() error {
	why := l.Err()
	if why == nil {
		why = errors.New("link closed")
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, why)
}

// readLoop delivers verdicts and updates until the link dies.
func (l *Link) readLoop() {
	for {
		frame, err := l.r.Read()
		if err != nil {
			l.kill(closedOr(err))
			return
		}
		m, err := protocol.DecodeDeciderMessage(frame, l.ext)
		if err != nil {
			l.kill(err)
			return
		}
		switch m := m.(type) {
		case *protocol.Update:
			if l.cfg.OnUpdate != nil {
				l.cfg.OnUpdate(Lists{m.AllowedDomains, m.DeniedDomains, m.DeniedResolvedAddresses})
			}
		case protocol.Verdict:
			if err := l.deliver(m); err != nil {
				l.kill(err)
				return
			}
		default:
			l.kill(&protocol.ProtocolError{Reason: protocol.ReasonUnexpected})
			return
		}
	}
}

// deliver hands a verdict to the request waiting for it. A verdict nothing
// waits on is dropped when its request timed out or is far behind the
// newest; otherwise it is a violation.
func (l *Link) deliver(v protocol.Verdict) error {
	id := v.RequestID()
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, ok := l.waits[id]; ok {
		delete(l.waits, id)
		ch <- v
		return nil
	}
	if l.late[id] {
		delete(l.late, id)
		return nil
	}
	if id+idWindow <= l.newest {
		return nil
	}
	return fmt.Errorf("verdict for id %d, which nothing waits on", id)
}

// Ask sends r and waits for its verdict. Every failure wraps
// ErrUnavailable: the caller fails closed.
func (l *Link) Ask(ctx context.Context, r *protocol.Req) (protocol.Verdict, error) {
	if l.Err() != nil {
		return nil, l.unavailable()
	}
	id := l.nextID.Add(1)
	if id > protocol.MaxID {
		l.kill(errors.New("request ids exhausted"))
		return nil, l.unavailable()
	}
	r.ID = id
	msg, err := protocol.Encode(r)
	if err != nil {
		return nil, err
	}
	ch := make(chan protocol.Verdict, 1)
	l.mu.Lock()
	l.waits[id] = ch
	l.newest = id
	l.mu.Unlock()
	if err := l.send(msg); err != nil {
		l.forget(id, false)
		return nil, err
	}
	timer := time.NewTimer(l.cfg.Timeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-timer.C:
		l.forget(id, true)
		return nil, fmt.Errorf("%w: decider timed out", ErrUnavailable)
	case <-l.dead:
		return nil, l.unavailable()
	case <-ctx.Done():
		l.forget(id, true)
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
}

func (l *Link) forget(id uint64, late bool) {
	l.mu.Lock()
	delete(l.waits, id)
	if late {
		l.late[id] = true
		// Bound the memory of timed-out ids to the window that can still
		// deliver.
		for old := range l.late {
			if old+idWindow <= l.newest {
				delete(l.late, old)
			}
		}
	}
	l.mu.Unlock()
}

// Refused tells the decider (srt.v1) that request id was refused after an
// allow. Without the extension it does nothing.
func (l *Link) Refused(id uint64, reason string) {
	if !l.ext || id == 0 {
		return
	}
	msg, err := protocol.Encode(&protocol.Refused{ID: id, Reason: reason})
	if err == nil {
		l.send(msg)
	}
}
