package serve

import (
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Decisions of a record.
const (
	Allow = "allow" // forwarded (a tunnel opened, a request relayed)
	Deny  = "deny"  // refused by policy: the decider, the address check, missing credentials
	Fail  = "fail"  // not completed: malformed, decider unavailable, upstream unreachable
)

// Record is the decision record of one connection or request: the single
// structured log line written when it ends (STYLE 12).
type Record struct {
	Start    time.Time
	Decision string
	Reason   string
	Kind     string
	Host     string
	Port     int
	User     string
	Addr     string // the address dialled
	Up, Down int64  // bytes client→upstream and upstream→client (bodies, for plain HTTP)
	Code     string // the Observer's reason (proxy.Decision); "": from the decision
	// Inject says what became of the masked secrets an allow named
	// (forward: Inject… phrases); "": it named none.
	Inject string
	logged bool // written: a record is one line, however many paths end it
}

// NewRecord starts the record of a connection or request of kind.
func NewRecord(kind string) *Record {
	return &Record{Start: time.Now(), Kind: kind}
}

// About fills the destination fields from the request asked about.
func (r *Record) About(req *ask.Request) {
	r.Host, r.Port, r.User = req.Host, req.Port, req.User
}

// Set sets the outcome: Allow, Deny or Fail, and why.
func (r *Record) Set(decision, reason string) {
	r.Decision, r.Reason = decision, reason
}

// End marks the record written, and reports whether it was not yet: a
// record is one line, however many paths end it. A record ended without
// a decision is a fail.
func (r *Record) End() bool {
	if r.logged {
		return false
	}
	r.logged = true
	if r.Decision == "" {
		r.Decision = Fail
	}
	return true
}
