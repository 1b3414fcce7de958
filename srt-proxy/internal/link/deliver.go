package link

import (
	"errors"
	"fmt"

	"github.com/srt-sandbox/decider/protocol"
)

// phase is where a request stands with the decider.
type phase uint8

const (
	phaseVerdict phase = iota // the req is sent; its timer runs
	phaseReading              // need_body came; the body is read, no timer runs, only a deny may come
	phaseShown                // the body is sent; its timer runs; a need_body is a violation
)

// waiter is a request waiting for its verdicts. deliver hands them over on
// ch (a need_body, then at most one final verdict) and advances phase;
// once a final verdict is handed over the waiter is gone from the map.
type waiter struct {
	phase phase
	ch    chan protocol.Verdict
	kind  protocol.Kind
	// inject are the masks an allow names (srt.mask.v1), as they stood
	// when it was read; set before the allow is handed over on ch.
	inject []protocol.Mask
}

// lateState is what may still come for a request the proxy gave up on.
type lateState uint8

const (
	lateVerdict lateState = iota + 1 // it timed out before any need_body: one may still come, then a verdict
	lateShown                        // a need_body came already: another is a violation
)

// Link-level violations (the decider broke the sequence, not a message).
const (
	whyNotDeny        = "a verdict other than deny while the body was read"
	whySecondNeedBody = "a second need_body"
	whyNeedBodyLate   = "need_body where none may come"
	whyInjectKind     = "inject on an allow of a req whose kind is not http"
)

// readLoop delivers verdicts and updates until the link dies.
func (l *Link) readLoop() {
	for {
		frame, err := l.r.Read()
		if err != nil {
			l.kill(readError(err))
			return
		}
		m, err := protocol.DecodeDeciderMessageExts(frame, protocol.Exts{SRT: l.ext, Mask: l.mask})
		if err != nil {
			l.kill(readError(err))
			return
		}
		switch m := m.(type) {
		case *protocol.Update:
			if l.cfg.OnUpdate != nil {
				l.cfg.OnUpdate(Lists{m.AllowedDomains, m.DeniedDomains, m.DeniedResolvedAddresses})
			}
		case *protocol.Masks:
			l.mu.Lock()
			err := l.masks.Apply(m)
			l.mu.Unlock()
			if err != nil {
				l.kill(readError(err))
				return
			}
		case protocol.Verdict:
			if err := l.deliver(m); err != nil {
				l.kill(err)
				return
			}
		default: // a second hello
			l.kill(errors.New(protocol.ReasonUnexpected))
			return
		}
	}
}

// deliver hands a verdict to the request waiting for it, judging it
// against the request's phase. A verdict nothing waits on is dropped when
// its request was given up on (unless it is a need_body where none may
// come) or is far behind the newest; otherwise it is a violation.
func (l *Link) deliver(v protocol.Verdict) error {
	id := v.RequestID()
	_, needBody := v.(*protocol.NeedBody)
	_, deny := v.(*protocol.Deny)
	l.mu.Lock()
	defer l.mu.Unlock()
	// The masks an allow names are resolved as the allow is read: a drop
	// read after it does not take them from its request.
	var inject []protocol.Mask
	if a, ok := v.(*protocol.Allow); ok && a.Inject != nil {
		var err error
		if inject, err = l.masks.Resolve(a.Inject); err != nil {
			return readError(err)
		}
	}
	if w, ok := l.waits[id]; ok {
		if inject != nil && w.kind != protocol.KindHTTP {
			return errors.New(whyInjectKind)
		}
		switch {
		case w.phase == phaseReading && !deny:
			return errors.New(whyNotDeny)
		case w.phase == phaseShown && needBody:
			return errors.New(whySecondNeedBody)
		case w.phase == phaseVerdict && needBody:
			w.phase = phaseReading
		default:
			delete(l.waits, id)
		}
		w.inject = inject
		w.ch <- v
		return nil
	}
	if state, ok := l.late[id]; ok {
		switch {
		case needBody && state == lateShown:
			return errors.New(whyNeedBodyLate)
		case !needBody:
			delete(l.late, id)
		}
		return nil
	}
	if id < l.newest && l.newest-id >= idWindow {
		return nil
	}
	return fmt.Errorf("verdict for id %d, which nothing waits on", id)
}

// giveUp stops waiting for request id: what the decider says of it later
// is dropped (judged by state). If a final verdict arrived meanwhile it is
// returned instead, and nothing is marked late.
func (l *Link) giveUp(id uint64, w *waiter, state lateState) (protocol.Verdict, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := pending(w); ok {
		return v, true
	}
	delete(l.waits, id)
	l.late[id] = state
	// Bound the memory of abandoned ids to the window that can still
	// deliver.
	for old := range l.late {
		if l.newest-old >= idWindow {
			delete(l.late, old)
		}
	}
	return nil, false
}

// pending takes a verdict already handed to w, if any.
func pending(w *waiter) (protocol.Verdict, bool) {
	select {
	case v := <-w.ch:
		return v, true
	default:
		return nil, false
	}
}
