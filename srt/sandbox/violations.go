package sandbox

import (
	"strings"
	"sync"
	"time"

	"github.com/srt-sandbox/decider/sanitize"
	"github.com/srt-sandbox/decider/srtlink"
)

// Violation is one thing the sandbox refused.
type Violation struct {
	// Line is the sanitised record: "deny network-outbound host:port
	// (reason)".
	Line string `json:"line"`
	// Command is the text of the command it is attributed to, if known.
	Command string `json:"command,omitempty"`
	// Key is the attribution key's label (what the proxy username
	// carries), if any.
	Key  string    `json:"key,omitempty"`
	Time time.Time `json:"time"`
}

// keepViolations is how many violations the store keeps.
const keepViolations = 100

// ViolationStore keeps the last 100 violations and counts them all. It is
// safe for concurrent use.
type ViolationStore struct {
	mu     sync.Mutex
	recent []Violation
	total  int
	subs   map[int]func([]Violation)
	nextID int
}

// Add records v (its line sanitised).
func (s *ViolationStore) Add(v Violation) {
	v.Line = sanitize.Line(v.Line)
	s.mu.Lock()
	s.recent = append(s.recent, v)
	if len(s.recent) > keepViolations {
		s.recent = s.recent[len(s.recent)-keepViolations:]
	}
	s.total++
	subs := make([]func([]Violation), 0, len(s.subs))
	for _, f := range s.subs {
		subs = append(subs, f)
	}
	snapshot := append([]Violation(nil), s.recent...)
	s.mu.Unlock()
	for _, f := range subs {
		f(snapshot)
	}
}

// Recent returns the kept violations, oldest first.
func (s *ViolationStore) Recent() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.recent...)
}

// Total is how many violations were ever added.
func (s *ViolationStore) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// ForKey returns the kept violations attributed to the command with this
// attribution key (a command id, or the command text).
func (s *ViolationStore) ForKey(key string) []Violation {
	label := srtlink.KeyLabel(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Violation
	for _, v := range s.recent {
		if v.Key == label {
			out = append(out, v)
		}
	}
	return out
}

// Subscribe calls f now and after every change with the kept violations;
// the returned function unsubscribes.
func (s *ViolationStore) Subscribe(f func([]Violation)) (unsubscribe func()) {
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[int]func([]Violation){}
	}
	id := s.nextID
	s.nextID++
	s.subs[id] = f
	snapshot := append([]Violation(nil), s.recent...)
	s.mu.Unlock()
	f(snapshot)
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

// Clear forgets the kept violations (the total stays).
func (s *ViolationStore) Clear() {
	s.mu.Lock()
	s.recent = nil
	s.mu.Unlock()
}

// Ignored says whether ignoreViolations drops a violation: a "*" entry's
// substring in the line, or an entry whose key is a substring of the
// command text and one of whose values is a substring of the line.
func Ignored(rules map[string][]string, line, command string) bool {
	for key, values := range rules {
		if key != "*" && (command == "" || !strings.Contains(command, key)) {
			continue
		}
		for _, v := range values {
			if strings.Contains(line, v) {
				return true
			}
		}
	}
	return false
}

// Annotate appends the command's violations to its stderr text in the
// reference's <sandbox_violations> block; stderr is returned unchanged when
// there are none.
func Annotate(stderr string, vs []Violation) string {
	if len(vs) == 0 {
		return stderr
	}
	var sb strings.Builder
	sb.WriteString(stderr)
	sb.WriteString("\n<sandbox_violations>\n")
	for _, v := range vs {
		sb.WriteString(v.Line)
		sb.WriteByte('\n')
	}
	sb.WriteString("</sandbox_violations>")
	return sb.String()
}
