package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/engine"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
)

// errSRTGone: srt closed the control channel, which is how it says stop.
var errSRTGone = errors.New("srt closed the control channel")

// errNoHello: srt-proxy ended before its hello. It could not start, and
// srt reports why (srt-proxy tells it): nothing to add.
var errNoHello = errors.New("srt-proxy ended before its hello")

type decider struct {
	eng   *engine.Engine
	proxy *protocol.Reader
	out   *protocol.Writer
	ctl   *control.Conn
	debug bool
	ext   bool
	// offerable: srt.v1 may be offered only in line framing; the
	// reference's length framing carries the base protocol alone.
	offerable bool

	mu      sync.Mutex
	allowed map[uint64]allowedReq // recent allows, for refused messages
	order   []uint64
	asks    map[uint64]chan *control.Message
	nextQ   uint64
	ctx     context.Context
	cancel  context.CancelFunc
}

// allowedReq is what a refused message needs of the request it names.
type allowedReq struct {
	kind, method, host, path, user string
	port                           int
	query, tls                     bool
}

// keepAllowed is how many recent allows are remembered for refused
// messages (the id window of the protocol).
const keepAllowed = 4096

func newDecider(proxyFD, controlFD int, framing string, debug bool) (*decider, error) {
	f, err := protocol.ParseFraming(framing)
	if err != nil {
		return nil, err
	}
	p := os.NewFile(uintptr(proxyFD), "proxy")
	c := os.NewFile(uintptr(controlFD), "control")
	if p == nil || c == nil {
		return nil, errors.New("bad descriptor")
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &decider{
		eng: engine.New(), proxy: protocol.NewReader(p, f, protocol.MaxProxyFrame), out: protocol.NewWriter(p, f),
		ctl: control.New(c), debug: debug, offerable: f == protocol.Line, allowed: map[uint64]allowedReq{}, asks: map[uint64]chan *control.Message{},
		ctx: ctx, cancel: cancel,
	}
	d.eng.AskHost = d.askHost
	d.eng.Violation = func(line, user string) {
		d.ctl.Write(&control.Message{T: control.TViolation, Line: line, User: user})
	}
	return d, nil
}

// run serves until the proxy or srt goes away.
func (d *decider) run() error {
	first, err := d.ctl.Read()
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if first.T != control.TConfig || first.Network == nil {
		return errors.New("control: the first message must be the config")
	}
	if err := d.eng.SetNetwork(first.Network, first.Ask); err != nil {
		return err
	}
	if err := d.hello(); err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- d.controlLoop() }()
	go func() { errs <- d.proxyLoop() }()
	err = <-errs
	d.cancel()
	return err
}

// hello answers the proxy's hello with the lists, accepting srt.v1 when it
// is offered.
func (d *decider) hello() error {
	frame, err := d.proxy.Read()
	if errors.Is(err, io.EOF) {
		return errNoHello
	}
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	m, err := protocol.DecodeProxyMessage(frame, d.offerable)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	ph, ok := m.(*protocol.ProxyHello)
	if !ok {
		return errors.New("proxy: bad hello")
	}
	for _, e := range ph.Ext {
		d.ext = d.ext || e == protocol.ExtSRTv1
	}
	n := d.eng.Network()
	h := &protocol.DeciderHello{AllowedDomains: egress(n.AllowedDomains), DeniedDomains: egress(n.DeniedDomains)}
	if d.ext {
		h.Ext = []string{protocol.ExtSRTv1}
		if len(n.DeniedResolvedAddresses) > 0 {
			h.DeniedResolvedAddresses = n.DeniedResolvedAddresses
		}
	}
	return d.send(h)
}

// egress keeps the entries the hello can carry: the hello grammar is
// narrower than the settings' (no bare "*", lower-case); in srt's mode the
// proxy uses the lists only for the IP literals of the address check.
func egress(list []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, e := range list {
		if policy.ValidEgressEntry(e) && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

func (d *decider) send(m protocol.Message) error {
	b, err := protocol.Encode(m)
	if err != nil {
		return err
	}
	return d.out.Write(b)
}

func (d *decider) proxyLoop() error {
	for {
		frame, err := d.proxy.Read()
		if errors.Is(err, io.EOF) {
			return errors.New("proxy closed the stream")
		}
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		m, err := protocol.DecodeProxyMessage(frame, d.ext)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		switch m := m.(type) {
		case *protocol.Req:
			// Answered here unless only srt's ask can decide, which
			// waits: a goroutine per request would cost a thread wake-up
			// each.
			if dec, final := d.eng.Settle(m.Host, m.Port, m.User); final {
				d.answer(m, dec)
			} else {
				go func() { d.answer(m, d.eng.Decide(d.ctx, m.Host, m.Port, m.User)) }()
			}
		case *protocol.Refused:
			d.mu.Lock()
			a, ok := d.allowed[m.ID]
			d.mu.Unlock()
			if ok {
				d.eng.Refused(engine.Refusal{Kind: a.kind, Method: a.method, Host: a.host, Port: a.port, Path: a.path,
					Query: a.query, TLS: a.tls, Reason: m.Reason, User: a.user})
			}
		case *protocol.Sync:
			// Every earlier proxy message is handled (this loop is
			// sequential) and its violation written: tell srt.
			if err := d.ctl.Write(&control.Message{T: control.TSync, Q: m.ID}); err != nil {
				return err
			}
		case *protocol.Body:
			// The reference decider never asks for bodies.
			return errors.New("proxy: a body nothing asked for")
		default:
			return errors.New("proxy: unexpected message")
		}
	}
}

// answer sends the verdict for r and remembers an allow for the refused
// messages that may follow it.
func (d *decider) answer(r *protocol.Req, dec policy.Decision) {
	if d.debug {
		fmt.Fprintf(os.Stderr, "srt: debug: decision allow=%v host=%s port=%d kind=%s user=%s reason=%q rule=%q\n", dec.Allow, r.Host, r.Port, r.Kind, r.User, dec.Reason, dec.Rule)
	}
	if dec.Allow {
		d.mu.Lock()
		d.allowed[r.ID] = allowedReq{kind: r.Kind.String(), method: r.Method, host: r.Host, port: r.Port, path: r.Path,
			user: r.User, query: r.Query != nil, tls: r.SNI != nil}
		d.order = append(d.order, r.ID)
		if len(d.order) > keepAllowed {
			delete(d.allowed, d.order[0])
			d.order = d.order[1:]
		}
		d.mu.Unlock()
		d.send(&protocol.Allow{ID: r.ID})
		return
	}
	reason := denyReason(dec.Reason)
	d.send(&protocol.Deny{ID: r.ID, Status: 403, Reason: &reason})
}

// denyReason makes a reason fit the protocol: no control characters, at
// most 1024 bytes, never empty.
func denyReason(s string) string {
	s = policy.SanitizeLine(s)
	for len(s) > 1024 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" {
		s = policy.ReasonNotAllowed
	}
	return s
}

func (d *decider) controlLoop() error {
	for {
		m, err := d.ctl.Read()
		if errors.Is(err, io.EOF) {
			return errSRTGone
		}
		if err != nil {
			return err
		}
		switch m.T {
		case control.TConfig:
			if m.Network == nil {
				return errors.New("control: config without network")
			}
			if err := d.eng.SetNetwork(m.Network, m.Ask); err != nil {
				return err
			}
			if d.ext {
				u := &protocol.Update{AllowedDomains: egress(m.Network.AllowedDomains), DeniedDomains: egress(m.Network.DeniedDomains)}
				if len(m.Network.DeniedResolvedAddresses) > 0 {
					u.DeniedResolvedAddresses = m.Network.DeniedResolvedAddresses
				}
				if err := d.send(u); err != nil {
					return err
				}
			}
		case control.TRegister:
			if err := d.eng.Register(m.ID, m.AllowedDomains); err != nil {
				return err
			}
		case control.TUnregister:
			d.eng.Unregister(m.ID)
		case control.TSync:
			if err := d.ctl.Write(&control.Message{T: control.TSync, Q: m.Q}); err != nil {
				return err
			}
		case control.TAnswer:
			d.mu.Lock()
			ch := d.asks[m.Q]
			delete(d.asks, m.Q)
			d.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return fmt.Errorf("control: unexpected %q", m.T)
		}
	}
}

// askHost asks srt's host (the library's ask callback) and waits.
func (d *decider) askHost(ctx context.Context, host string, port int, user string) (bool, string, error) {
	ch := make(chan *control.Message, 1)
	d.mu.Lock()
	d.nextQ++
	q := d.nextQ
	d.asks[q] = ch
	d.mu.Unlock()
	if err := d.ctl.Write(&control.Message{T: control.TAsk, Q: q, Host: host, Port: port, User: user}); err != nil {
		return false, "", err
	}
	select {
	case m := <-ch:
		return m.Allow, m.Reason, nil
	case <-ctx.Done():
		return false, "", ctx.Err()
	}
}
