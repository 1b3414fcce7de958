package policy

import (
	"github.com/srt-sandbox/decider/hostname"
)

// Reason phrases of the evaluation order (§4.2). They appear in violation
// lines, CONNECT status phrases and logs, so they are compared verbatim.
const (
	ReasonUnavailable   = "sandbox policy unavailable"
	ReasonMalformedHost = hostname.ReasonMalformed
	ReasonDenyList      = "host is on the deny list"
	ReasonNotAllowed    = "host is not on the allow list"
	ReasonUserDenied    = "user denied"              // ask callback answered anything but true
	ReasonPromptFailed  = "permission prompt failed" // ask callback failed
	// ReasonAllowList is srt's own phrase for an allow; the reference gives
	// allows no reason.
	ReasonAllowList = "host is on the allow list"
)

// Step says which step of the evaluation order decided.
type Step uint8

const (
	StepUnavailable Step = iota + 1 // no policy: deny
	StepMalformed                   // host failed validation: deny
	StepDenyList                    // a deniedDomains entry matched: deny
	StepAllowList                   // an allowedDomains entry matched: allow
	StepStrict                      // on neither list, strictAllowlist: final deny
	StepUndecided                   // on neither list: deny unless per-command lists or the ask callback allow
)

var stepNames = [...]string{
	StepUnavailable: "unavailable",
	StepMalformed:   "malformed",
	StepDenyList:    "deny-list",
	StepAllowList:   "allow-list",
	StepStrict:      "strict",
	StepUndecided:   "undecided",
}

func (s Step) String() string {
	if int(s) < len(stepNames) && stepNames[s] != "" {
		return stepNames[s]
	}
	return "unknown"
}

// Lists is a validated set of domain lists (see ParseLists).
type Lists struct {
	Allowed       []Pattern
	Denied        []Pattern
	DeniedReasons map[string]string // keyed by the exact deniedDomains entry text
	Strict        bool              // strictAllowlist
}

// Decision is the answer for one destination.
type Decision struct {
	Allow  bool
	Reason string // one of the Reason constants, or a deniedDomainReasons value (raw; sanitise before display)
	Rule   string // the entry that decided, as written; "" if none
	Step   Step
	Host   string // the canonical host; "" when malformed or without a policy
}

// MayContinue reports whether the caller may still allow the destination by
// a per-command list or the ask callback (steps 5 and 6). Until one of them
// does, the decision stands as a deny.
func (d Decision) MayContinue() bool { return d.Step == StepUndecided }

// Decide runs steps 1–4 of the evaluation order for a destination host, as
// the client requested it, and port: a nil Lists denies; a malformed host
// denies; a deniedDomains match denies (the first matching entry's reason
// from DeniedReasons, else ReasonDenyList); an allowedDomains match allows;
// anything else is denied with ReasonNotAllowed, finally under Strict and
// otherwise with Step StepUndecided.
func (l *Lists) Decide(host string, port int) Decision {
	if l == nil {
		return Decision{Reason: ReasonUnavailable, Step: StepUnavailable}
	}
	h, err := hostname.Canonical(host)
	if err != nil {
		return Decision{Reason: ReasonMalformedHost, Step: StepMalformed}
	}
	for _, p := range l.Denied {
		if p.Match(h, port) {
			reason := l.DeniedReasons[p.String()]
			if reason == "" {
				reason = ReasonDenyList
			}
			return Decision{Reason: reason, Rule: p.String(), Step: StepDenyList, Host: h}
		}
	}
	for _, p := range l.Allowed {
		if p.Match(h, port) {
			return Decision{Allow: true, Reason: ReasonAllowList, Rule: p.String(), Step: StepAllowList, Host: h}
		}
	}
	step := StepUndecided
	if l.Strict {
		step = StepStrict
	}
	return Decision{Reason: ReasonNotAllowed, Step: step, Host: h}
}
