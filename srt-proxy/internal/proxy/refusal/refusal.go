// Package refusal is every answer srt-proxy gives itself instead of
// forwarding: why (a Cause), what is known of it (a Refusal), and how each
// operating mode renders it (a Mode: SRTMode, the reference srt's 403s
// with X-Proxy-Error; ProxyOnlyMode, X-Deny-Reason codes) into an HTTP
// answer or a SOCKS5 reply code (an Answer). It also holds the fixed
// reasons clients compare verbatim (the Why constants), the codes an
// Observer is told (Refusal.Code), and the ways an allowed upstream leg
// fails (UpstreamFailure).
//
// Rendering is pure: no connection is written here, and every reason a
// decider or a client supplied is sanitised before it reaches a status
// phrase or a body line.
package refusal

import "github.com/srt-sandbox/srt-proxy/internal/proxy/ask"

// Cause says why the proxy answers a request itself instead of forwarding
// it.
type Cause int

const (
	CauseDenied       Cause = iota + 1 // the decider denied
	CauseAddress                       // allowed, but the name resolved only to refused addresses
	CauseUnreachable                   // allowed, but the upstream could not be reached
	CauseUnavailable                   // the decider is unavailable (fail closed)
	CauseAuth                          // proxy credentials missing or wrong
	CauseMalformed                     // the request head or its target cannot be parsed
	CauseHeadTooLarge                  // the request head is over the limit
	CauseUnaskable                     // the request cannot be put to the decider (protocol limits)
	CauseInternal                      // the proxy failed

	// Refusals of proxy-only mode's fixed policy (§2.2). Every Mode renders
	// them: SRTMode as in srt's own mode, ProxyOnlyMode with its codes.
	// (TLS termination's causes, shared by both modes, are in
	// terminate.go.)
	CauseHostNotAllowed     // the host gate: on deniedDomains, or not on allowedDomains
	CauseBadRequest         // a request the proxy does not forward as it stands (Reason says why; 400)
	CauseBodyless           // the decider asked for the body of a GET, HEAD or OPTIONS that has one (403)
	CausePlaintextHeaderSet // an allow that sets headers on plain HTTP, not enabled (403)
)

// Refusal is one answer the proxy gives itself.
type Refusal struct {
	Cause  Cause
	Kind   ask.Kind // KindHTTP answers keep the connection when they can; KindConnect answers close it
	Status int      // the decider's status, for CauseDenied
	Reason string   // the decider's reason, the refusal phrase, or what is wrong
	Host   string   // the canonical destination host
	// Failure says how the upstream leg failed, for CauseUnreachable
	// (upstream.go); Reason is then the line the client is told.
	Failure UpstreamFailure
	// Log is the decision record's reason when it says more than Reason
	// (an upstream failure's error, which may name the proxy's own
	// addresses); "": Reason.
	Log string
}

// Answer is a rendered refusal. For KindSOCKS only SOCKS is used.
type Answer struct {
	Status int
	Phrase string
	Header [][2]string // in order; the proxy adds Content-Length (and Connection) for KindHTTP
	Body   string
	SOCKS  byte // the SOCKS5 reply code
}

// Mode renders refusals the way one operating mode of srt-proxy answers
// them. srt's own mode is SRTMode; proxy-only mode (X-Deny-Reason codes) is
// another.
type Mode interface {
	Render(r Refusal) Answer
}

// WhyTwoHosts refuses a request with more than one Host header, which no
// message of the decider protocol can carry; compared verbatim by clients.
const WhyTwoHosts = "more than one Host header"
