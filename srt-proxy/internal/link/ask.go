package link

import (
	"context"
	"errors"
	"fmt"

	"github.com/srt-sandbox/decider/protocol"
)

// Body is the body of a request, which the decider may ask to see
// (need_body). The link reads it at most once, from one goroutine.
type Body interface {
	// Hidden reports whether the request's method normally has no body
	// (GET, HEAD, OPTIONS), so the decider is shown none: asked for it, the
	// link looks for a first byte, refuses the request if there is one
	// (ErrBodyless) and otherwise sends an empty body.
	Hidden() bool
	// Reserve is the most bytes Read(max) will hold: the declared length
	// when it is known and below max, max when it is not known, 0 when
	// there is no body. It is charged to the body budget while the
	// decider decides.
	Reserve(max int) int
	// Read reads up to max bytes for the decider; cut reports that the
	// body goes on past them. The bytes read stay with the request: an
	// allowed request forwards them first, then the rest. Read blocks
	// until it has max bytes or the body ends, or until Abort.
	Read(max int) (data []byte, cut bool, err error)
	// Abort makes a Read in progress return soon (the decider denied
	// meanwhile, or the link died).
	Abort()
}

// ErrBodyless refuses a request whose method normally has no body (its
// body hidden from the decider) when the decider asked to see the body and
// the wire carries one.
var ErrBodyless = errors.New("the decider asked to see the body of a request whose method normally has none, and it has one")

// ErrBodyRead wraps the error of a body read that failed (the client went
// away or stalled): the request cannot be answered.
var ErrBodyRead = errors.New("reading the request body")

// whyBudget is the refusal of a need_body past the body budget; the link
// survives it.
const whyBudget = "too many request bodies held for inspection"

// Ask sends r and returns its final verdict (*protocol.Allow or
// *protocol.Deny) and, for an allow that names masks (srt.mask.v1's
// inject), those masks as they stood when the allow was read (nil when
// it names none). A need_body is served here: body's first bytes go to
// the decider (a nil body is an empty one) and the final verdict follows.
// Every failure of the decider wraps ErrUnavailable, and the caller fails
// closed; ErrBodyless and ErrBodyRead are the request's own.
func (l *Link) Ask(ctx context.Context, r *protocol.Req, body Body) (protocol.Verdict, []protocol.Mask, error) {
	w := &waiter{ch: make(chan protocol.Verdict, 2), kind: r.Kind}
	v, err := l.ask(ctx, r, body, w)
	if err != nil {
		return nil, nil, err
	}
	// w.inject was set before the allow was handed over on w.ch.
	return v, w.inject, nil
}

func (l *Link) ask(ctx context.Context, r *protocol.Req, body Body, w *waiter) (protocol.Verdict, error) {
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
	l.mu.Lock()
	l.waits[id] = w
	l.newest = id
	l.mu.Unlock()
	if err := l.send(msg); err != nil {
		l.giveUp(id, w, lateVerdict)
		return nil, err
	}
	v, err := l.await(ctx, id, w, lateVerdict)
	if err != nil {
		return nil, err
	}
	nb, ok := v.(*protocol.NeedBody)
	if !ok {
		return v, nil
	}
	return l.inspect(ctx, id, w, nb.Max, body)
}

// await waits, with the verdict timer, for the next verdict handed to w.
// On expiry or cancellation the request is given up on (late marks what
// may still come for it). A verdict handed over before the link died is
// returned: the decider answered while the link was sound.
func (l *Link) await(ctx context.Context, id uint64, w *waiter, late lateState) (protocol.Verdict, error) {
	t := l.clock.start()
	defer l.clock.stop(t)
	var why error
	select {
	case v := <-w.ch:
		return v, nil
	case <-l.dead:
		return l.died(w)
	case <-t.expired:
		why = fmt.Errorf("%w: decider timed out", ErrUnavailable)
	case <-ctx.Done():
		why = fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
	if v, ok := l.giveUp(id, w, late); ok {
		return v, nil
	}
	return nil, why
}

// died answers a wait the link's death ended: with a verdict delivered
// before the link died, if there is one (select picks at random among
// ready cases, so it may have chosen the death), else unavailable.
func (l *Link) died(w *waiter) (protocol.Verdict, error) {
	select {
	case v := <-w.ch:
		return v, nil
	default:
		return nil, l.unavailable()
	}
}

type readResult struct {
	data []byte
	cut  bool
	err  error
}

// inspect serves a need_body: reserve the body budget, read the body (no
// timer; the decider may deny meanwhile), send it, await the final
// verdict.
func (l *Link) inspect(ctx context.Context, id uint64, w *waiter, limit int, body Body) (protocol.Verdict, error) {
	hidden := body != nil && body.Hidden()
	reserve := 0
	if body != nil && !hidden {
		reserve = min(max(body.Reserve(limit), 0), limit)
	}
	if !l.reserve(reserve) {
		if v, ok := l.giveUp(id, w, lateShown); ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, whyBudget)
	}
	defer l.release(reserve)

	abort := func() {
		if body != nil {
			body.Abort()
		}
	}
	done := make(chan readResult, 1)
	go func() {
		var res readResult
		switch {
		case body == nil:
		case hidden:
			// Look for one byte: a hidden body the wire carries is refused.
			var probe []byte
			probe, _, res.err = body.Read(1)
			if res.err == nil && len(probe) > 0 {
				res.err = ErrBodyless
			}
		default:
			res.data, res.cut, res.err = body.Read(limit)
		}
		done <- res
	}()
	var res readResult
	select {
	case res = <-done:
	case v := <-w.ch: // only a deny comes here (deliver kills on anything else)
		abort()
		<-done
		return v, nil
	case <-l.dead:
		abort()
		<-done
		return l.died(w)
	case <-ctx.Done():
		abort()
		<-done
		res.err = fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
	if res.err != nil {
		if v, ok := l.giveUp(id, w, lateShown); ok {
			return v, nil
		}
		if errors.Is(res.err, ErrBodyless) || errors.Is(res.err, ErrUnavailable) {
			return nil, res.err
		}
		return nil, fmt.Errorf("%w: %w", ErrBodyRead, res.err)
	}
	if v, ok := l.toShown(id, w); ok {
		return v, nil // denied while the body was read
	}
	msg, err := protocol.Encode(&protocol.Body{ID: id, Data: res.data, Cut: res.cut})
	if err != nil {
		l.giveUp(id, w, lateShown)
		return nil, err
	}
	if err := l.send(msg); err != nil {
		l.giveUp(id, w, lateShown)
		return nil, err
	}
	return l.await(ctx, id, w, lateShown)
}

// toShown moves w on once its body is read, unless the decider denied
// meanwhile (then that verdict is returned).
func (l *Link) toShown(id uint64, w *waiter) (protocol.Verdict, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := pending(w); ok {
		return v, true
	}
	w.phase = phaseShown
	return nil, false
}

// reserve charges n bytes to the body budget; false when they do not fit.
func (l *Link) reserve(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held+int64(n) > l.cfg.MaxBodyHeld {
		return false
	}
	l.held += int64(n)
	return true
}

func (l *Link) release(n int) {
	l.mu.Lock()
	l.held -= int64(n)
	l.mu.Unlock()
}

// BodyBytesHeld is the body bytes reserved for inspection now.
func (l *Link) BodyBytesHeld() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}
