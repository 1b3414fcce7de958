package refusal

// Decision reasons an Observer is told besides the refusal codes of the
// modes (X-Deny-Reason).
const (
	CodeProxyAuth = "proxy_auth" // missing or wrong proxy credentials (HTTP 407, SOCKS5)
	CodeSOCKS4    = "socks4"     // a SOCKS4 client, answered "rejected"
)

// causeCodes are the Decision reasons of the refusals (CauseUnreachable:
// its UpstreamFailure's code).
var causeCodes = map[Cause]string{
	CauseDenied:             CodeDecider,
	CauseRequestDenied:      CodeDecider,
	CauseAddress:            CodeAddressNotAllowed,
	CauseUnavailable:        CodeDeciderUnavailable,
	CauseAuth:               CodeProxyAuth,
	CauseMalformed:          CodeBadRequest,
	CauseHeadTooLarge:       CodeBadRequest,
	CauseUnaskable:          CodeBadRequest,
	CauseBadRequest:         CodeBadRequest,
	CauseInternal:           "internal_error",
	CauseHostNotAllowed:     CodeHostNotAllowed,
	CauseBodyless:           CodeBodyless,
	CausePlaintextHeaderSet: CodePlaintextHeaderSet,
	CauseMethodRefused:      CodeMethodRefused,
	CauseMisdirected:        CodeMisdirected,
	CauseAmbiguousTarget:    "ambiguous_target",
	CauseTooManyTunnels:     CodeTooManyTunnels,
	CauseOpaqueTunnel:       CodeOpaqueTunnel,
	CauseInjectRefused:      CodeInjectRefused,
}

// Code is the Decision reason of a refusal (an Observer's).
func (r Refusal) Code() string {
	if r.Cause == CauseUnreachable {
		return r.Failure.Code()
	}
	if c, ok := causeCodes[r.Cause]; ok {
		return c
	}
	return "internal_error"
}

// causeNames name the causes.
var causeNames = map[Cause]string{
	CauseDenied:       "denied",
	CauseAddress:      "address refused",
	CauseUnreachable:  "upstream unreachable",
	CauseUnavailable:  "decider unavailable",
	CauseAuth:         "proxy authentication required",
	CauseMalformed:    "malformed request",
	CauseHeadTooLarge: "request head too large",
	CauseUnaskable:    "request cannot be asked about",
	CauseInternal:     "internal error",

	CauseRequestDenied:   "request denied",
	CauseMethodRefused:   "method refused",
	CauseMisdirected:     "misdirected request",
	CauseAmbiguousTarget: "ambiguous request-target",
	CauseTooManyTunnels:  "too many tunnels",
	CauseOpaqueTunnel:    "opaque tunnel refused",
	CauseInjectRefused:   "masked secrets not put back",
}

// Name is the cause's text in a decision record when the refusal has no
// reason of its own ("denied", "malformed request").
func (c Cause) Name() string { return causeNames[c] }

// DeniedByPolicy reports whether a refusal of proxy-only mode is a policy
// decision (recorded as a deny) rather than a failure.
func DeniedByPolicy(c Cause) bool {
	switch c {
	case CauseHostNotAllowed, CauseOpaqueTunnel, CauseBodyless, CausePlaintextHeaderSet, CauseMethodRefused, CauseRequestDenied, CauseInjectRefused:
		return true
	}
	return false
}
