package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// DefaultTimeout is how long a request waits for its verdict.
const DefaultTimeout = 5 * time.Second

// idWindow: a verdict for an id this far below the newest is stale and
// dropped, not a violation.
const idWindow = 4096

// DefaultMaxBodyHeld bounds the request-body bytes held for the decider at
// once, across requests: two bodies of the protocol's largest.
const DefaultMaxBodyHeld = 2 * protocol.MaxBody

// queueRoom is the room for req frames on top of the body frames the body
// budget allows at once (base64: four thirds of it) before a decider that
// has not read them counts as gone.
const queueRoom = 32 << 20

// maxQueuedFor is the queue limit for a body budget: ⌈held·4/3⌉ + 32 MiB
// (for 64 MiB, 123,032,918 bytes).
func maxQueuedFor(held int64) int64 { return (held*4+2)/3 + queueRoom }

// Lists are the decider's hello (or update) lists.
type Lists struct {
	AllowedDomains, DeniedDomains, DeniedResolvedAddresses []string
}

// Config configures a Link.
type Config struct {
	Framing protocol.Framing
	// OfferExt offers the srt.v1 extension and, with it, srt.mask.v1
	// (line framing only).
	OfferExt bool
	// Timeout bounds the wait for each verdict (DefaultTimeout if zero).
	Timeout time.Duration
	// OnUpdate receives the lists of an update message (srt.v1).
	OnUpdate func(Lists)
	// MaxBodyHeld bounds the body bytes held for inspection at once
	// (DefaultMaxBodyHeld if zero); MaxQueued the bytes queued unread
	// towards the decider (⌈MaxBodyHeld·4/3⌉ + 32 MiB if zero).
	MaxBodyHeld, MaxQueued int64
}

// Link is a live connection to a decider.
type Link struct {
	cfg    Config
	r      *protocol.Reader
	stream io.Writer       // written by the outbox's owner
	direct syscall.RawConn // non-nil: a sender may write without waiting (outbox)
	close  func() error
	ext    bool // srt.v1 is in force
	mask   bool // srt.mask.v1 is in force
	hello  Lists

	nextID atomic.Uint64
	mu     sync.Mutex
	waits  map[uint64]*waiter
	late   map[uint64]lateState // ids given up on whose verdicts may still come
	newest uint64
	held   int64 // body bytes reserved for inspection
	masks  *protocol.MaskTable

	out       *outbox
	maxQueued int64
	clock     *clock // times the verdict waits

	deadOnce sync.Once
	dead     chan struct{}
	why      error
}

// ErrUnavailable is wrapped by every error Ask returns when the decider
// cannot answer.
var ErrUnavailable = errors.New("request decider")

// Dial says hello over rw and waits for the decider's hello (at most
// helloTimeout; 0 waits as long as it takes). The link is then live until
// the stream fails or Close.
func Dial(rw io.ReadWriteCloser, cfg Config, helloTimeout time.Duration) (*Link, error) {
	ctx := context.Background()
	if helloTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, helloTimeout)
		defer cancel()
	}
	l, err := DialContext(ctx, rw, cfg)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, errors.New("decider: no hello")
	}
	return l, err
}

// DialContext is Dial with the wait for the decider's hello bounded by ctx
// instead: when ctx ends first, rw is closed and ctx's error returned.
func DialContext(ctx context.Context, rw io.ReadWriteCloser, cfg Config) (*Link, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBodyHeld <= 0 {
		cfg.MaxBodyHeld = DefaultMaxBodyHeld
	}
	l := &Link{
		cfg: cfg, r: protocol.NewReader(rw, cfg.Framing, protocol.MaxFrame), stream: rw, direct: directConn(rw),
		close: rw.Close, waits: map[uint64]*waiter{}, late: map[uint64]lateState{}, masks: protocol.NewMaskTable(),
		out: newOutbox(), maxQueued: cfg.MaxQueued, clock: newClock(cfg.Timeout), dead: make(chan struct{}),
	}
	if l.maxQueued <= 0 {
		l.maxQueued = maxQueuedFor(cfg.MaxBodyHeld)
	}
	hello := &protocol.ProxyHello{}
	offer := cfg.OfferExt && cfg.Framing == protocol.Line
	if offer {
		hello.Ext = []string{protocol.ExtSRTv1, protocol.ExtMaskV1}
	}
	msg, err := protocol.Encode(hello)
	if err != nil {
		return nil, err
	}
	if err := protocol.NewWriter(rw, cfg.Framing).Write(msg); err != nil {
		rw.Close()
		return nil, fmt.Errorf("decider: %w", writeError(err))
	}
	type result struct {
		h   *protocol.DeciderHello
		err error
	}
	got := make(chan result, 1)
	go func() {
		frame, err := l.r.Read()
		if err != nil {
			got <- result{err: readError(err)}
			return
		}
		m, err := protocol.DecodeDeciderMessageExts(frame, protocol.Exts{SRT: offer, Mask: offer})
		if err != nil {
			got <- result{err: helloError(err)}
			return
		}
		h, ok := m.(*protocol.DeciderHello)
		if !ok {
			got <- result{err: errors.New(protocol.ReasonBadHello)}
			return
		}
		got <- result{h: h}
	}()
	select {
	case res := <-got:
		if res.err != nil {
			rw.Close()
			return nil, fmt.Errorf("decider: %w", res.err)
		}
		l.ext = res.h.HasExt(protocol.ExtSRTv1)
		l.mask = res.h.HasExt(protocol.ExtMaskV1)
		l.hello = Lists{res.h.AllowedDomains, res.h.DeniedDomains, res.h.DeniedResolvedAddresses}
	case <-ctx.Done():
		rw.Close()
		return nil, ctx.Err()
	}
	go l.readLoop()
	go l.writeLoop()
	return l, nil
}

// helloError names a broken first message as the reference does: a frame
// that is not one strict JSON object keeps its reason; any message that is
// not a well-formed hello is "bad hello".
func helloError(err error) error {
	var pe *protocol.ProtocolError
	if errors.As(err, &pe) {
		switch pe.Reason {
		case protocol.ReasonUnexpected, protocol.ReasonBadVerdict, protocol.ReasonBadUpdate:
			return errors.New(protocol.ReasonBadHello)
		}
		return errors.New(pe.Reason)
	}
	return err
}

// readError is why reading from the decider failed: its end of the stream
// closing, a protocol violation, or an I/O error.
func readError(err error) error {
	var pe *protocol.ProtocolError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("decider closed the stream")
	case errors.As(err, &pe):
		return errors.New(pe.Reason)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("decider closed the stream")
	}
	return fmt.Errorf("read error: %w", err)
}

func writeError(err error) error { return fmt.Errorf("write error: %w", err) }

// Hello returns the lists of the decider's hello.
func (l *Link) Hello() Lists { return l.hello }

// Ext says whether srt.v1 is in force.
func (l *Link) Ext() bool { return l.ext }

// Mask says whether srt.mask.v1 is in force.
func (l *Link) Mask() bool { return l.mask }

// MasksLive is the number of masks the decider gave and has not dropped.
func (l *Link) MasksLive() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.masks.Len()
}

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

func (l *Link) unavailable() error {
	why := l.Err()
	if why == nil {
		why = errors.New("link closed")
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, why)
}

// Sync asks the decider (srt.v1) to tell srt, over srt's control channel
// with id, once it has handled every message sent before. Without the
// extension it does nothing.
func (l *Link) Sync(id uint64) {
	if !l.ext || id == 0 {
		return
	}
	if msg, err := protocol.Encode(&protocol.Sync{ID: id}); err == nil {
		l.send(msg)
	}
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
