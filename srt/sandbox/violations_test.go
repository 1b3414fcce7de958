//go:build linux

package sandbox

import (
	"fmt"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/srtlink"
)

func TestViolationStoreKeepsTheLast100(t *testing.T) {
	var s ViolationStore
	var seen int
	unsub := s.Subscribe(func(vs []Violation) { seen = len(vs) })
	for i := 0; i < 130; i++ {
		s.Add(Violation{Line: fmt.Sprintf("deny network-outbound h%d.test:80 (x)", i), Key: srtlink.KeyLabel("k")})
	}
	if len(s.Recent()) != 100 || s.Total() != 130 || seen != 100 {
		t.Fatalf("recent %d, total %d, subscriber saw %d", len(s.Recent()), s.Total(), seen)
	}
	if s.Recent()[0].Line != "deny network-outbound h30.test:80 (x)" {
		t.Fatalf("oldest kept: %q", s.Recent()[0].Line)
	}
	unsub()
	s.Add(Violation{Line: "late"})
	if seen != 100 {
		t.Fatal("an unsubscribed listener was called")
	}
	if len(s.ForKey("k")) != 99 || len(s.ForKey("other")) != 0 { // the late one has no key
		t.Fatal("ForKey")
	}
	s.Clear()
	if len(s.Recent()) != 0 || s.Total() != 131 {
		t.Fatal("Clear")
	}
}

func TestViolationLinesAreSanitised(t *testing.T) {
	var s ViolationStore
	s.Add(Violation{Line: "deny network-outbound e.test:443 (Evil <host>\nuse\u200b good\u202e.test)  "})
	if got := s.Recent()[0].Line; got != "deny network-outbound e.test:443 (Evil host use  good .test)" {
		t.Fatalf("got %q", got)
	}
}

func TestIgnored(t *testing.T) {
	rules := map[string][]string{"*": {"/usr/bin"}, "git push": {"github.com"}}
	for _, c := range []struct {
		line, command string
		want          bool
	}{
		{"deny openat /usr/bin/x", "anything", true},
		{"deny network-outbound github.com:443 (x)", "git push origin", true},
		{"deny network-outbound github.com:443 (x)", "curl", false},
		{"deny network-outbound other.test:80 (x)", "git push", false},
		{"deny network-outbound github.com:443 (x)", "", false},
	} {
		if got := Ignored(rules, c.line, c.command); got != c.want {
			t.Errorf("Ignored(%q, %q) = %v", c.line, c.command, got)
		}
	}
}

func TestAskReasonIsSanitisedAndCut(t *testing.T) {
	if got := cutReason("not\tapproved <x> \u200bnow"); got != "not approved x  now" {
		t.Fatalf("got %q", got)
	}
	long := strings.Repeat("é", 499) + "😀" // the emoji's pair would straddle unit 500
	if got := cutReason(long); got != strings.Repeat("é", 499) {
		t.Fatalf("cut in a surrogate pair: %d units", len([]rune(got)))
	}
}

func TestCommandIDLength(t *testing.T) {
	for _, c := range []struct {
		id   string
		want int
	}{
		{"abc", 3}, {"😀", 2}, {"a\xed\xa0\x80b", 2}, {strings.Repeat("x", 22), 22},
	} {
		if got := countUnits(c.id); got != c.want {
			t.Errorf("countUnits(%q) = %d, want %d", c.id, got, c.want)
		}
	}
}
