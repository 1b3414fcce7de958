package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/engine"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/sanitize"
)

// errNoHello: srt-proxy ended before its hello. It could not start, and
// says why itself: nothing to add.
var errNoHello = errors.New("srt-proxy ended before its hello")

// errProxyGone: srt-proxy closed the stream.
var errProxyGone = errors.New("proxy closed the stream")

// decider answers srt-proxy's questions with the engine, for srt (srtMode,
// over its control channel) or on its own (alone, from a settings file).
// This is what both share: the hello, the requests, the refusals after an
// allow, the list updates, one decision record per request.
type decider struct {
	eng   *engine.Engine
	proxy *protocol.Reader
	out   *protocol.Writer
	// offerable: srt.v1 may be offered only in line framing; the
	// reference's length framing carries the base protocol alone.
	offerable bool
	ext       bool // srt.v1 is in force (set by hello)
	// acceptMask: accept srt.mask.v1 when it is offered (srt's mode, where
	// srt gives the masks); mask: it is in force (set by hello).
	acceptMask, mask bool
	// maskMu orders the masks messages and the allows that name them: a
	// mask is sent before any allow can name it, and a drop after the
	// last. table is what the proxy holds (protocol.MaskTable).
	maskMu sync.Mutex
	table  *protocol.MaskTable
	ask    bool // the host has an ask callback (srt's mode)
	// lists are the hello's (and an update's) lists for the settings.
	lists func(n *control.Network) (allowed, denied []string)
	// sync answers the proxy's srt.v1 sync.
	sync func(id uint64) error
	// log receives the decision records (zerolog.Nop: none).
	log zerolog.Logger

	mu      sync.Mutex
	allowed map[uint64]allowedReq // recent allows, for refused messages
	order   []uint64
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

func newDecider(stream io.Reader, out io.Writer, f protocol.Framing) *decider {
	return &decider{
		eng: engine.New(), proxy: protocol.NewReader(stream, f, protocol.MaxProxyFrame), out: protocol.NewWriter(out, f),
		offerable: f == protocol.Line, allowed: map[uint64]allowedReq{}, log: zerolog.Nop(), table: protocol.NewMaskTable(),
		sync: func(uint64) error { return nil },
	}
}

// setNetwork puts n in force: the engine decides the next request with
// it, and under srt.v1 the proxy's lists follow (update).
func (d *decider) setNetwork(n *control.Network) error {
	if err := d.eng.SetNetwork(n, d.ask); err != nil {
		return err
	}
	return d.update(n)
}

// update sends the proxy the lists of n, under srt.v1.
func (d *decider) update(n *control.Network) error {
	if !d.ext {
		return nil
	}
	allowed, denied := d.lists(n)
	u := &protocol.Update{AllowedDomains: allowed, DeniedDomains: denied}
	if len(n.DeniedResolvedAddresses) > 0 {
		u.DeniedResolvedAddresses = n.DeniedResolvedAddresses
	}
	return d.send(u)
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
	offeredMask := false
	for _, e := range ph.Ext {
		d.ext = d.ext || e == protocol.ExtSRTv1
		offeredMask = offeredMask || e == protocol.ExtMaskV1
	}
	n := d.eng.Network()
	allowed, denied := d.lists(n)
	h := &protocol.DeciderHello{AllowedDomains: allowed, DeniedDomains: denied}
	if d.ext {
		h.Ext = []string{protocol.ExtSRTv1}
		if offeredMask && d.acceptMask {
			h.Ext = append(h.Ext, protocol.ExtMaskV1)
			d.mask = true
		}
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

// ipLiterals keeps the entries of egress that are IP literals.
func ipLiterals(list []string) []string {
	out := []string{}
	for _, e := range egress(list) {
		if p, err := policy.ParseEgressPattern(e); err == nil && p.IsIP() {
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

// proxyLoop handles the proxy's messages until the stream ends.
func (d *decider) proxyLoop(decide func(*protocol.Req)) error {
	for {
		frame, err := d.proxy.Read()
		// A reset is srt-proxy gone with verdicts it had not read.
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return errProxyGone
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
			decide(m)
		case *protocol.Refused:
			d.mu.Lock()
			a, ok := d.allowed[m.ID]
			d.mu.Unlock()
			if ok {
				d.eng.Refused(engine.Refusal{Kind: a.kind, Method: a.method, Host: a.host, Port: a.port, Path: a.path,
					Query: a.query, TLS: a.tls, Reason: m.Reason, User: a.user})
				d.refusedRecord(m.ID, a, m.Reason)
			}
		case *protocol.Sync:
			// Every earlier proxy message is handled (this loop is
			// sequential) and its violation written.
			if err := d.sync(m.ID); err != nil {
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

// answer sends the verdict for r, records it, and remembers an allow for
// the refused messages that may follow it.
func (d *decider) answer(r *protocol.Req, dec policy.Decision) {
	d.record(r, dec)
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
		if d.mask && r.Kind == protocol.KindHTTP {
			// Under maskMu: the masks named were sent before, and no drop
			// of them goes out before this allow.
			d.maskMu.Lock()
			d.send(&protocol.Allow{ID: r.ID, Inject: d.eng.Inject(r.User, r.Host)})
			d.maskMu.Unlock()
			return
		}
		d.send(&protocol.Allow{ID: r.ID})
		return
	}
	reason := denyReason(dec.Reason)
	d.send(&protocol.Deny{ID: r.ID, Status: 403, Reason: &reason})
}

// giveMasks keeps the masks srt gave for the command whose key is id and
// sends them to the proxy, before any allow can name them. A mask the
// proxy would refuse (the link's rules, protocol.MaskTable) is refused
// here first: the error names it, never its value.
func (d *decider) giveMasks(id string, masks []control.Mask) error {
	if !d.mask {
		return nil // the proxy takes none: no allow names any
	}
	d.maskMu.Lock()
	defer d.maskMu.Unlock()
	pm, err := d.eng.SetMasks(id, masks)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	m := &protocol.Masks{Masks: pm}
	if _, err := protocol.Encode(m); err != nil {
		d.eng.DropMasks(id)
		return fmt.Errorf("control: the masks of a command: %v", err)
	}
	if err := d.table.Apply(m); err != nil {
		d.eng.DropMasks(id)
		return fmt.Errorf("control: the masks of a command: %v", err)
	}
	return d.send(m)
}

// dropMasks forgets the masks of the command whose key is id and tells
// the proxy to, after every allow that named them.
func (d *decider) dropMasks(id string) error {
	d.maskMu.Lock()
	defer d.maskMu.Unlock()
	ids := d.eng.DropMasks(id)
	if !d.mask || ids == nil {
		return nil
	}
	m := &protocol.Masks{Drop: ids}
	if err := d.table.Apply(m); err != nil {
		return fmt.Errorf("control: %v", err)
	}
	return d.send(m)
}

// denyReason makes a reason fit the protocol: no control characters, at
// most 1024 bytes, never empty.
func denyReason(s string) string {
	s = sanitize.Line(s)
	for len(s) > 1024 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" {
		s = policy.ReasonNotAllowed
	}
	return s
}
