// Package ask is the proxy's one seam to policy: what it asks about (a
// Request: a tunnel, or one plain-HTTP request), what it is told (a
// Verdict), and who answers (an Asker, the decider: internal/decide). The
// proxy holds no policy; every destination it serves passed through Ask.
package ask

import (
	"context"
	"errors"
)

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
	Host       string // canonical (hostname.Canonical), IPv6 without brackets
	Port       int
	HostHeader string // the single Host header; "" when absent
	Path       string // the request-target up to '?', as spelled
	Query      string // what follows the first '?'; "" when none
	// Headers maps lower-case names to their values in arrival order,
	// without host and without a Proxy-Authorization the proxy consumed.
	Headers map[string][]string
	// HeaderNames are Headers' names in order of first arrival; nil means
	// no order (the decider then sees them sorted).
	HeaderNames []string
	// SNI is the TLS server name of a request read inside a terminated
	// TLS tunnel; "" otherwise.
	SNI string
	// Body is the request's body, which the decider may ask to see
	// (need_body); nil when the request has none to show (a tunnel).
	Body Body
	// AllowedAs is the Asker's name for the request once it allowed it
	// (the decider's request id), which Refused tells the decider; 0
	// before. The Asker sets it: it keeps nothing of the request itself.
	AllowedAs uint64
}

// Body is a request body the decider may ask to see. The Asker reads it at
// most once, from one goroutine, while Ask runs; the bytes it reads stay
// with the request and are forwarded first if it is allowed.
type Body interface {
	// Hidden reports whether the method normally has no body (GET, HEAD,
	// OPTIONS): the decider is shown none, and a request whose wire
	// carries one anyway is refused if the decider asks to see it
	// (ErrBodylessBody).
	Hidden() bool
	// Reserve is the most bytes Read(max) holds: the declared length when
	// known and below max, max when unknown, 0 for no body.
	Reserve(max int) int
	// Read reads up to max bytes; cut reports that the body goes on.
	Read(max int) (data []byte, cut bool, err error)
	// Abort makes a Read in progress return soon.
	Abort()
}

// ErrBodylessBody is the Asker's error for a request whose method normally
// has no body when the decider asked to see the body and the wire carries
// one: the proxy refuses it (403 bodyless_method_body).
var ErrBodylessBody = errors.New("the decider asked to see the body of a request whose method normally has none, and it has one")

// UnaskableError is the Asker's error for a request no message of the
// decider protocol can carry: the proxy refuses it with Reason (400) and
// the decider is not asked.
type UnaskableError struct{ Reason string }

func (e *UnaskableError) Error() string { return e.Reason }

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
	// Inject are the masked secrets (srt.mask.v1) the allow names for this
	// request: the proxy puts each one's Value back where the request
	// carries its Sentinel, and signs an AWS request made with a masked
	// key again with the real one. nil when none.
	Inject []Mask
}

// Mask is a masked secret (srt.mask.v1) an allow names for its request.
type Mask struct {
	ID       string
	Sentinel string // what the sandboxed client sends in the secret's place
	Value    string // the secret; never logged
	// AWSPair and AWSRole place the secret in an AWS key pair ("" when
	// it is none); AWSRole is "accessKeyId", "secretAccessKey" or
	// "sessionToken" (decider/protocol's AWS… roles).
	AWSPair, AWSRole string
}

// Asker is the proxy's one seam to policy: the decider.
type Asker interface {
	// Ask asks about r. An error means the decider is unavailable (it timed
	// out, closed, broke the protocol): the proxy fails closed, with 503 or
	// SOCKS reply 0x01, and the error's text in the refusal — except
	// ErrBodylessBody and *UnaskableError, which are the request's own
	// refusals.
	Ask(ctx context.Context, r *Request) (Verdict, error)
	// Refused tells the decider that the proxy refused r after an allow:
	// reason is the resolved-address refusal ("resolved to a loopback
	// address") or "upstream unreachable: …".
	Refused(r *Request, reason string)
}

// SetsHeaders reports whether an allow sets a header value (a credential
// placed included); a name given no values only removes.
func (v Verdict) SetsHeaders() bool {
	for _, values := range v.SetHeaders {
		if len(values) > 0 {
			return true
		}
	}
	return false
}
