package proxy

import (
	"time"

	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Decisions of a record.
const (
	decisionAllow = "allow" // forwarded (a tunnel opened, a request relayed)
	decisionDeny  = "deny"  // refused by policy: the decider, the address check, missing credentials
	decisionFail  = "fail"  // not completed: malformed, decider unavailable, upstream unreachable
)

// record is the decision record of one connection or request: the single
// structured log line written when it ends (STYLE 12).
type record struct {
	start    time.Time
	decision string
	reason   string
	kind     string
	host     string
	port     int
	user     string
	addr     string // the address dialled
	up, down int64  // bytes client→upstream and upstream→client (bodies, for plain HTTP)
	code     string // the Observer's reason (observe.go); "": from the decision
	logged   bool   // written: a record is one line, however many paths end it
}

func newRecord(kind string) *record {
	return &record{start: time.Now(), kind: kind}
}

// about fills the destination fields from the request asked about.
func (r *record) about(req *ask.Request) {
	r.host, r.port, r.user = req.Host, req.Port, req.User
}

func (r *record) set(decision, reason string) {
	r.decision, r.reason = decision, reason
}

// log writes the record, once: a refusal written on the way (an upstream
// that failed under forward) is not written again by the caller.
func (s *Server) log(r *record) {
	if r.logged {
		return
	}
	r.logged = true
	if r.decision == "" {
		r.decision = decisionFail
	}
	s.observe(r)
	e := s.Logger.Info()
	if !e.Enabled() {
		return // a logger that discards (no --debug): nothing to format
	}
	e.Str("decision", r.decision).
		Str("reason", sanitize.Line(r.reason)).
		Str("kind", r.kind).
		Str("host", r.host).
		Int("port", r.port).
		Str("user", r.user).
		Str("addr", r.addr).
		Int64("bytes_up", r.up).
		Int64("bytes_down", r.down).
		Int64("duration_ms", time.Since(r.start).Milliseconds()).
		Send()
}
