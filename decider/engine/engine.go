// Package engine is the reference decider's policy: the settings' network
// rules in the evaluation order of the reference implementation (§4.2):
// deny list, allow list, strictAllowlist, the per-command allow lists of
// the library, and the host's ask callback. It turns a request into a
// verdict and records each refusal as a violation line.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/sanitize"
	"github.com/srt-sandbox/decider/srtlink"
)

// Engine decides. It is safe for concurrent use.
type Engine struct {
	lists atomic.Pointer[policy.Lists]
	raw   atomic.Pointer[control.Network]
	ask   atomic.Bool

	mu       sync.RWMutex
	commands map[string][]policy.Pattern // keyed by the attribution label's key part
	masks    map[string][]commandMask    // keyed as commands

	// Ask asks the host about a destination no rule decides; nil: never.
	AskHost func(ctx context.Context, host string, port int, user string) (allow bool, reason string, err error)
	// Violation records a refusal: the line, and the user it is
	// attributed to.
	Violation func(line, user string)
}

// New returns an engine with no policy: it denies everything ("sandbox
// policy unavailable") until SetNetwork.
func New() *Engine {
	return &Engine{commands: map[string][]policy.Pattern{}, masks: map[string][]commandMask{}}
}

// SetNetwork replaces the lists; the next request uses them. Invalid
// settings are refused and the ones in force stay.
func (e *Engine) SetNetwork(n *control.Network, ask bool) error {
	if n == nil {
		return errors.New("engine: no network settings")
	}
	lists, errs := policy.ParseLists(n.AllowedDomains, n.DeniedDomains, n.DeniedDomainReasons, n.StrictAllowlist)
	if len(errs) > 0 {
		return fmt.Errorf("engine: %w", errs[0])
	}
	for _, r := range n.DeniedResolvedAddresses {
		if _, err := policy.ParseAddressRange(r); err != nil {
			return fmt.Errorf("engine: deniedResolvedAddresses %q: %w", r, err)
		}
	}
	e.lists.Store(lists)
	e.raw.Store(n)
	e.ask.Store(ask)
	return nil
}

// Network returns the current lists as given.
func (e *Engine) Network() *control.Network { return e.raw.Load() }

// Register sets a command's own allow list, found through the attribution
// key the proxy username carries.
func (e *Engine) Register(id string, allowed []string) error {
	var pats []policy.Pattern
	for _, a := range allowed {
		p, err := policy.ParseAllowPattern(a)
		if err != nil {
			return fmt.Errorf("engine: invalid allowedDomains entry %q: %w", a, err)
		}
		pats = append(pats, p)
	}
	e.mu.Lock()
	e.commands[srtlink.KeyLabel(id)] = pats
	e.mu.Unlock()
	return nil
}

// Unregister removes a command's own list; absent ids are ignored.
func (e *Engine) Unregister(id string) {
	e.mu.Lock()
	delete(e.commands, srtlink.KeyLabel(id))
	e.mu.Unlock()
}

// commandMask is a masked secret of a command and where it is put back.
type commandMask struct {
	mask  protocol.Mask
	hosts []policy.Pattern // injectHosts: names, wildcards, IP literals; no ports
}

// SetMasks keeps the masked secrets of the command whose key is id (srt's
// masks message), adding to those it has, and returns them as the proxy
// is given them (protocol.Masks). An injectHosts entry that is not a host
// pattern, or an AWS role that is not one, refuses them all; the error
// names the mask, never its value. The engine names them in Inject from
// now on: send them to the proxy first.
func (e *Engine) SetMasks(id string, masks []control.Mask) ([]protocol.Mask, error) {
	if len(masks) == 0 {
		return nil, fmt.Errorf("engine: masks of command %q: none given", id)
	}
	add := make([]commandMask, 0, len(masks))
	out := make([]protocol.Mask, 0, len(masks))
	for _, m := range masks {
		if len(m.InjectHosts) == 0 {
			return nil, fmt.Errorf("engine: mask %q: no injectHosts", m.ID)
		}
		cm := commandMask{mask: protocol.Mask{ID: m.ID, Sentinel: m.Sentinel, Value: m.Value}}
		for _, h := range m.InjectHosts {
			p, err := policy.ParseHostPattern(h)
			if err != nil {
				return nil, fmt.Errorf("engine: mask %q: injectHosts entry %q: %w", m.ID, h, err)
			}
			cm.hosts = append(cm.hosts, p)
		}
		if (m.AWSPair == "") != (m.AWSRole == "") {
			return nil, fmt.Errorf("engine: mask %q: awsPair and awsRole come together", m.ID)
		}
		if m.AWSPair != "" {
			cm.mask.AWS = &protocol.AWSRole{Pair: m.AWSPair, Role: m.AWSRole}
		}
		add = append(add, cm)
		out = append(out, cm.mask)
	}
	label := srtlink.KeyLabel(id)
	e.mu.Lock()
	e.masks[label] = append(e.masks[label], add...)
	e.mu.Unlock()
	return out, nil
}

// DropMasks forgets the masks of the command whose key is id and returns
// their ids (nil when it had none): tell the proxy to drop them.
func (e *Engine) DropMasks(id string) []string {
	label := srtlink.KeyLabel(id)
	e.mu.Lock()
	ms := e.masks[label]
	delete(e.masks, label)
	e.mu.Unlock()
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.mask.ID)
	}
	return ids
}

// Inject names the masks an allowed request puts back (srt.mask.v1's
// inject): those of the command user names whose injectHosts match host
// (canonical; ports play no part), in the order they were given. nil
// when none; a caller asks only for http requests, never for tunnels.
func (e *Engine) Inject(user, host string) []string {
	label := srtlink.UserLabel(user)
	if label == "" {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	var ids []string
	for _, m := range e.masks[label] {
		for _, p := range m.hosts {
			if p.Match(host, 0) {
				ids = append(ids, m.mask.ID)
				break
			}
		}
	}
	return ids
}

// Decision is a verdict for one destination.
type Decision struct {
	policy.Decision
}

// Decide applies the evaluation order to host:port for user (the proxy
// username) and records a refusal. It may ask the host (AskHost), and then
// waits for its answer.
func (e *Engine) Decide(ctx context.Context, host string, port int, user string) policy.Decision {
	d, final := e.Settle(host, port, user)
	if final {
		return d
	}
	d = e.askHost(ctx, d, port, user)
	if !d.Allow {
		e.record(host, port, d.Reason, user)
	}
	return d
}

// Settle is Decide without the host's answer: the lists, then the
// command's own list. final is false when only the host can decide (the
// ask callback is on and no rule decided); Decide then asks it. A final
// refusal is recorded. Settle never waits, so a caller can answer on the
// spot and keep Decide for what is not final.
func (e *Engine) Settle(host string, port int, user string) (d policy.Decision, final bool) {
	lists := e.lists.Load()
	if lists == nil {
		d = policy.Decision{Reason: policy.ReasonUnavailable, Step: policy.StepUnavailable}
	} else {
		d = lists.Decide(host, port)
	}
	if d.MayContinue() {
		if allow, ok := e.commandAllows(d.Host, port, user); ok {
			return allow, true
		}
		if e.ask.Load() && e.AskHost != nil {
			return d, false
		}
	}
	if !d.Allow {
		e.record(host, port, d.Reason, user)
	}
	return d, true
}

// commandAllows looks host:port up in the own allow list of the command
// the proxy username names.
func (e *Engine) commandAllows(host string, port int, user string) (policy.Decision, bool) {
	label := srtlink.UserLabel(user)
	if label == "" {
		return policy.Decision{}, false
	}
	e.mu.RLock()
	pats := e.commands[label]
	e.mu.RUnlock()
	for _, p := range pats {
		if p.Match(host, port) {
			return policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: p.String(), Step: policy.StepAllowList, Host: host}, true
		}
	}
	return policy.Decision{}, false
}

// askHost asks the host about a destination no rule decided.
func (e *Engine) askHost(ctx context.Context, d policy.Decision, port int, user string) policy.Decision {
	allow, reason, err := e.AskHost(ctx, d.Host, port, user)
	switch {
	case err != nil:
		d.Reason = policy.ReasonPromptFailed
	case allow:
		return policy.Decision{Allow: true, Reason: "allowed by the host", Step: policy.StepUndecided, Host: d.Host}
	case sanitize.Line(reason) != "": // one that sanitises to nothing is "user denied" (§9.2)
		d.Reason = reason
	default:
		d.Reason = policy.ReasonUserDenied
	}
	return d
}

// Refusal is a refusal srt-proxy made after the engine allowed a request
// (the srt.v1 "refused" message), with the request as it was asked about.
type Refusal struct {
	Kind   string // "connect", "socks" or "http"
	Method string
	Host   string
	Port   int
	Path   string
	Query  bool // the request had a query
	TLS    bool // an http request read inside a terminated TLS tunnel
	Reason string
	User   string
}

// Reason prefixes of srt-proxy's refusals after an allow
// (docs/decider-protocol.md).
const (
	refusedAddress     = "resolved to "         // the resolved-address check
	refusedUnreachable = "upstream unreachable" // not a violation, as in the reference
)

// Refused records a refusal srt-proxy made after an allow: the
// resolved-address check as the network-outbound line of the engine's own
// refusals; a refusal by the proxy's request rules (refuseOpaqueTunnels,
// too many terminated tunnels, headers set on plain HTTP) as the
// reference's "deny http-request <METHOD> <target> (reason)" or "deny
// socks-tunnel host:port (reason)". An unreachable upstream is not
// recorded, as in the reference.
func (e *Engine) Refused(r Refusal) {
	switch {
	case strings.HasPrefix(r.Reason, refusedAddress):
		e.record(r.Host, r.Port, r.Reason, r.User)
	case strings.HasPrefix(r.Reason, refusedUnreachable) || e.Violation == nil:
	case r.Kind == "socks":
		e.Violation("deny socks-tunnel "+hostPort(r.Host, r.Port)+" ("+sanitize.Line(r.Reason)+")", r.User)
	case r.Kind == "connect":
		e.Violation("deny http-request CONNECT "+hostPort(r.Host, r.Port)+" ("+sanitize.Line(r.Reason)+")", r.User)
	default:
		e.Violation("deny http-request "+r.Method+" "+requestURL(r)+" ("+sanitize.Line(r.Reason)+")", r.User)
	}
}

// requestURL is an http request's URL in a violation line, its query
// reduced to "?…" (§9.5).
func requestURL(r Refusal) string {
	scheme, def := "http", 80
	if r.TLS {
		scheme, def = "https", 443
	}
	host := hostPort(r.Host, r.Port)
	if r.Port == def {
		host = strings.TrimSuffix(host, ":"+strconv.Itoa(r.Port))
	}
	u := scheme + "://" + host + r.Path
	if r.Query {
		u += "?…"
	}
	return sanitize.Line(u)
}

func (e *Engine) record(host string, port int, reason, user string) {
	if e.Violation == nil {
		return
	}
	e.Violation("deny network-outbound "+hostPort(host, port)+" ("+sanitize.Line(reason)+")", user)
}

// hostPort is host:port with an IPv6 host in brackets (once: a host
// requested as "[::1]" keeps its own).
func hostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}
