package proxy

import "context"

// Kind says what a Request asks about.
type Kind int

const (
	KindConnect Kind = iota + 1 // an HTTP CONNECT tunnel
	KindSOCKS                   // a SOCKS5 CONNECT tunnel
	KindHTTP                    // one plain-HTTP request
)

var kindNames = [...]string{KindConnect: "connect", KindSOCKS: "socks", KindHTTP: "http"}

// String is the kind's name in the decider protocol's srt.v1 extension.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Request is what the proxy asks the decider about: a tunnel (Kind
// KindConnect or KindSOCKS: Method "CONNECT", Path "*", no headers) or one
// plain-HTTP request.
type Request struct {
	Kind       Kind
	User       string // the proxy username the client authenticated with; "" if none
	Method     string
	Host       string // canonical (policy.CanonicalHost), IPv6 without brackets
	Port       int
	HostHeader string // the single Host header; "" when absent
	Path       string // the request-target up to '?', as spelled
	Query      string // what follows the first '?'; "" when none
	// Headers maps lower-case names to their values in arrival order,
	// without host and without a Proxy-Authorization the proxy consumed.
	Headers map[string][]string
}

// Verdict is the decider's answer.
type Verdict struct {
	Allow  bool
	Status int    // a deny's status (400–599); srt's mode renders every deny as 403
	Reason string // a deny's reason, raw (rendering sanitises it)
	// SetHeaders and RemoveHeaders edit an allowed plain-HTTP request before
	// it is forwarded: first every header whose folded name (lower-case,
	// '_' and '.' as '-') is removed or set goes, then the set values are
	// added.
	SetHeaders    map[string][]string
	RemoveHeaders []string
}

// Asker is the proxy's one seam to policy: the decider.
type Asker interface {
	// Ask asks about r. An error means the decider is unavailable (it timed
	// out, closed, broke the protocol): the proxy fails closed, with 503 or
	// SOCKS reply 0x01, and the error's text in the refusal.
	Ask(ctx context.Context, r *Request) (Verdict, error)
	// Refused tells the decider that the proxy refused r after an allow:
	// reason is the resolved-address refusal ("resolved to a loopback
	// address") or "upstream unreachable: …".
	Refused(r *Request, reason string)
}
