package proxy

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// Observer is told what the server does, for metrics (Server.Observer).
// Its methods are called from every connection's goroutine at once and
// must not block.
type Observer interface {
	ConnOpened()              // a client connection was accepted
	ConnClosed()              // and has ended
	TunnelOpened(kind string) // serve.TunnelConnect, serve.TunnelSOCKS or serve.TunnelTerminated
	TunnelClosed(kind string)
	Decided(d Decision) // a decision record ended (once per record)
	AcceptFailed()      // a listener's Accept failed, and is retried
}

// Decision is one decision record as an Observer is told it: no host, no
// free text, so that every field takes a few values.
type Decision struct {
	Kind    string // "http", "https" (a request inside a terminated tunnel), "connect", "socks", "socks4", "capture"
	Outcome string // OutcomeAllow, OutcomeDeny, OutcomeFail
	// Reason is a code: ReasonAllowed; an X-Deny-Reason code
	// (host_not_allowed, decider, address_not_allowed, …, and the
	// upstream_… failures); proxy_auth, socks4, ambiguous_target,
	// internal_error, denied (any other refusal); or ReasonIncomplete (the
	// client went away, a write failed, the proxy stopped).
	Reason   string
	Up, Down int64 // bytes client→upstream and upstream→client
}

// Outcomes of a Decision.
const (
	OutcomeAllow = serve.Allow
	OutcomeDeny  = serve.Deny
	OutcomeFail  = serve.Fail
)

// Reasons of a Decision besides the refusal codes.
const (
	ReasonAllowed    = "allowed"
	ReasonIncomplete = "incomplete"
	reasonDenied     = "denied" // a deny with no code of its own (a captured connection in proxy-only mode)
)

// observe tells the Observer about a record ending.
func (s *Server) observe(r *serve.Record) {
	if s.Observer == nil {
		return
	}
	code := r.Code
	if code == "" {
		code = map[string]string{serve.Allow: ReasonAllowed, serve.Deny: reasonDenied}[r.Decision]
		if code == "" {
			code = ReasonIncomplete
		}
	}
	s.Observer.Decided(Decision{Kind: r.Kind, Outcome: r.Decision, Reason: code, Up: r.Up, Down: r.Down})
}

// tunnelOpened tells the Observer a tunnel of kind opened; the func it
// returns tells it the tunnel closed.
func (s *Server) tunnelOpened(kind string) func() {
	if s.Observer == nil {
		return func() {}
	}
	s.Observer.TunnelOpened(kind)
	return func() { s.Observer.TunnelClosed(kind) }
}
