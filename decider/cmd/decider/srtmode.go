package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
)

// errSRTGone: srt closed the control channel, which is how it says stop.
var errSRTGone = errors.New("srt closed the control channel")

// srtMode is the decider srt starts: the settings, the per-command lists
// and the answers of the host's ask callback come over srt's control
// channel (decider/control), and the violations and questions go back on
// it.
type srtMode struct {
	*decider
	ctl *control.Conn

	mu     sync.Mutex
	asks   map[uint64]chan *control.Message
	nextQ  uint64
	ctx    context.Context
	cancel context.CancelFunc
}

func newSRTMode(proxyFD, controlFD int, f protocol.Framing, debug bool) (*srtMode, error) {
	p := os.NewFile(uintptr(proxyFD), "proxy")
	c := os.NewFile(uintptr(controlFD), "control")
	if p == nil || c == nil {
		return nil, errors.New("bad descriptor")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &srtMode{decider: newDecider(p, p, f), ctl: control.New(c), asks: map[uint64]chan *control.Message{}, ctx: ctx, cancel: cancel}
	s.acceptMask = true // srt gives the masks (control.TMasks)
	s.lists = func(n *control.Network) ([]string, []string) {
		// Under srt.v1 srt-proxy reads the lists only for their IP
		// literals (its address check): the names would only make a long
		// list overrun one message (protocol.MaxFrame), and the update
		// would stop the decider.
		if s.ext {
			return ipLiterals(n.AllowedDomains), ipLiterals(n.DeniedDomains)
		}
		return egress(n.AllowedDomains), egress(n.DeniedDomains)
	}
	s.sync = func(id uint64) error {
		// Tell srt: every violation of what came before is written.
		return s.ctl.Write(&control.Message{T: control.TSync, Q: id})
	}
	if debug {
		s.log = textLogger(os.Stderr, "srt: debug: ").Level(zerolog.InfoLevel)
	}
	s.eng.AskHost = s.askHost
	s.eng.Violation = func(line, user string) {
		s.ctl.Write(&control.Message{T: control.TViolation, Line: line, User: user})
	}
	return s, nil
}

// run serves until the proxy or srt goes away.
func (s *srtMode) run() error {
	first, err := s.ctl.Read()
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if first.T != control.TConfig || first.Network == nil {
		return errors.New("control: the first message must be the config")
	}
	s.ask = first.Ask
	if err := s.eng.SetNetwork(first.Network, first.Ask); err != nil {
		return err
	}
	if err := s.hello(); err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- s.controlLoop() }()
	go func() { errs <- s.proxyLoop(s.decide) }()
	err = <-errs
	if errors.Is(err, errProxyGone) {
		// When srt exits it closes the control channel first, and
		// srt-proxy stops at the end of its own channel: the proxy's
		// stream may still be seen to end first here. srt gone is no
		// failure to report.
		select {
		case cerr := <-errs:
			if errors.Is(cerr, errSRTGone) {
				err = cerr
			}
		case <-time.After(srtGoneWait):
		}
	}
	s.cancel()
	return err
}

// srtGoneWait is how long a decider whose proxy went away waits to see
// whether srt went away too.
const srtGoneWait = 500 * time.Millisecond

// decide answers r here unless only srt's ask can decide, which waits: a
// goroutine per request would cost a thread wake-up each.
func (s *srtMode) decide(r *protocol.Req) {
	if dec, final := s.eng.Settle(r.Host, r.Port, r.User); final {
		s.answer(r, dec)
		return
	}
	go func() { s.answer(r, s.eng.Decide(s.ctx, r.Host, r.Port, r.User)) }()
}

func (s *srtMode) controlLoop() error {
	for {
		m, err := s.ctl.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errSRTGone
			}
			return err
		}
		switch m.T {
		case control.TConfig:
			if m.Network == nil {
				return errors.New("control: config without network")
			}
			s.ask = m.Ask
			if err := s.setNetwork(m.Network); err != nil {
				return err
			}
		case control.TRegister:
			if err := s.eng.Register(m.ID, m.AllowedDomains); err != nil {
				return err
			}
		case control.TUnregister:
			s.eng.Unregister(m.ID)
			if err := s.dropMasks(m.ID); err != nil {
				return err
			}
		case control.TMasks:
			if err := s.giveMasks(m.ID, m.Masks); err != nil {
				return err
			}
		case control.TSync:
			if err := s.ctl.Write(&control.Message{T: control.TSync, Q: m.Q}); err != nil {
				return err
			}
		case control.TAnswer:
			s.mu.Lock()
			ch := s.asks[m.Q]
			delete(s.asks, m.Q)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return fmt.Errorf("control: unexpected %q", m.T)
		}
	}
}

// askHost asks srt's host (the library's ask callback) and waits.
func (s *srtMode) askHost(ctx context.Context, host string, port int, user string) (bool, string, error) {
	ch := make(chan *control.Message, 1)
	s.mu.Lock()
	s.nextQ++
	q := s.nextQ
	s.asks[q] = ch
	s.mu.Unlock()
	if err := s.ctl.Write(&control.Message{T: control.TAsk, Q: q, Host: host, Port: port, User: user}); err != nil {
		return false, "", err
	}
	select {
	case m := <-ch:
		return m.Allow, m.Reason, nil
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}
