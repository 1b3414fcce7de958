package policy

import "testing"

func mustLists(t testing.TB, allowed, denied []string, reasons map[string]string, strict bool) *Lists {
	t.Helper()
	l, errs := ParseLists(allowed, denied, reasons, strict)
	if errs != nil {
		t.Fatalf("ParseLists: %v", errs)
	}
	return l
}

func TestDecide(t *testing.T) {
	lists := mustLists(t,
		[]string{"*.example.org", "github.com", "api.github.com:443", "127.0.0.1:8765", "localhost", "[::1]:9000", "evil.example.org"},
		[]string{"evil.example.org", "*.blocked.example.org", "github.com:22", "169.254.169.254", "[fd00::1]"},
		map[string]string{
			"evil.example.org": "Evil <host>\nuse good.example.org",
			"unused.example":   "never fires",
		}, false)
	cases := []struct {
		name string
		host string
		port int
		want Decision
	}{
		{"wildcard apex refused", "example.org", 80,
			Decision{Reason: ReasonNotAllowed, Step: StepUndecided, Host: "example.org"}},
		{"wildcard sub allowed", "a.example.org", 80,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "*.example.org", Step: StepAllowList, Host: "a.example.org"}},
		{"deny beats allow with reason", "evil.example.org", 443,
			Decision{Reason: "Evil <host>\nuse good.example.org", Rule: "evil.example.org", Step: StepDenyList, Host: "evil.example.org"}},
		{"deny wildcard default reason", "x.blocked.example.org", 443,
			Decision{Reason: ReasonDenyList, Rule: "*.blocked.example.org", Step: StepDenyList, Host: "x.blocked.example.org"}},
		{"deny port scoped", "github.com", 22,
			Decision{Reason: ReasonDenyList, Rule: "github.com:22", Step: StepDenyList, Host: "github.com"}},
		{"deny port scoped other port allowed", "github.com", 443,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "github.com", Step: StepAllowList, Host: "github.com"}},
		{"host case and dot", "GitHub.COM.", 443,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "github.com", Step: StepAllowList, Host: "github.com"}},
		{"allow port scoped", "api.github.com", 443,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "api.github.com:443", Step: StepAllowList, Host: "api.github.com"}},
		{"allow port scoped other port", "api.github.com", 80,
			Decision{Reason: ReasonNotAllowed, Step: StepUndecided, Host: "api.github.com"}},
		{"ip literal port", "127.0.0.1", 8765,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "127.0.0.1:8765", Step: StepAllowList, Host: "127.0.0.1"}},
		{"ip literal other port", "127.0.0.1", 8766,
			Decision{Reason: ReasonNotAllowed, Step: StepUndecided, Host: "127.0.0.1"}},
		{"ip shorthand canonicalised", "127.1", 8765,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "127.0.0.1:8765", Step: StepAllowList, Host: "127.0.0.1"}},
		{"integer metadata denied", "2852039166", 80,
			Decision{Reason: ReasonDenyList, Rule: "169.254.169.254", Step: StepDenyList, Host: "169.254.169.254"}},
		{"mapped metadata denied", "[::ffff:169.254.169.254]", 80,
			Decision{Reason: ReasonDenyList, Rule: "169.254.169.254", Step: StepDenyList, Host: "169.254.169.254"}},
		{"ipv6 denied expanded", "[fd00:0:0:0:0:0:0:1]", 443,
			Decision{Reason: ReasonDenyList, Rule: "[fd00::1]", Step: StepDenyList, Host: "fd00::1"}},
		{"ipv6 allowed port", "[::1]", 9000,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "[::1]:9000", Step: StepAllowList, Host: "::1"}},
		{"ipv6 unbracketed", "0::1", 9000,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "[::1]:9000", Step: StepAllowList, Host: "::1"}},
		{"localhost", "LOCALHOST", 8765,
			Decision{Allow: true, Reason: ReasonAllowList, Rule: "localhost", Step: StepAllowList, Host: "localhost"}},
		{"wildcard never matches ip", "1.2.3.4", 80,
			Decision{Reason: ReasonNotAllowed, Step: StepUndecided, Host: "1.2.3.4"}},
		{"malformed nul", "evil.com\x00.example.org", 80,
			Decision{Reason: ReasonMalformedHost, Step: StepMalformed}},
		{"malformed zone", "[::ffff:1.2.3.4%x.example.org]", 80,
			Decision{Reason: ReasonMalformedHost, Step: StepMalformed}},
		{"malformed empty", "", 80,
			Decision{Reason: ReasonMalformedHost, Step: StepMalformed}},
		{"malformed numeric tail", "a.example.org.123", 80,
			Decision{Reason: ReasonMalformedHost, Step: StepMalformed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := lists.Decide(tc.host, tc.port); got != tc.want {
				t.Errorf("Decide(%q, %d) =\n %+v\nwant\n %+v", tc.host, tc.port, got, tc.want)
			}
		})
	}
}

func TestDecideStrictAndNil(t *testing.T) {
	var nilLists *Lists
	if got := nilLists.Decide("example.com", 443); got != (Decision{Reason: ReasonUnavailable, Step: StepUnavailable}) {
		t.Errorf("nil Lists: %+v", got)
	}
	strict := mustLists(t, []string{"example.com"}, nil, nil, true)
	got := strict.Decide("other.example", 443)
	if got.Allow || got.Reason != ReasonNotAllowed || got.Step != StepStrict || got.MayContinue() {
		t.Errorf("strict: %+v", got)
	}
	lax := mustLists(t, []string{"example.com"}, nil, nil, false)
	if got := lax.Decide("other.example", 443); !got.MayContinue() || got.Allow {
		t.Errorf("non-strict: %+v", got)
	}
	for _, d := range []Decision{lax.Decide("example.com", 1), lax.Decide("", 1), nilLists.Decide("x.y", 1)} {
		if d.MayContinue() {
			t.Errorf("%+v may continue", d)
		}
	}
	empty := mustLists(t, nil, nil, nil, false)
	if got := empty.Decide("example.com", 443); got.Allow || got.Step != StepUndecided {
		t.Errorf("empty lists: %+v (an empty allow list means no network)", got)
	}
}

func TestDecideDenyAll(t *testing.T) {
	l := mustLists(t, []string{"example.com", "1.2.3.4"}, []string{"*:22", "github.com"}, map[string]string{"*:22": "no ssh"}, false)
	cases := []struct {
		host   string
		port   int
		allow  bool
		reason string
	}{
		{"example.com", 22, false, "no ssh"},
		{"1.2.3.4", 22, false, "no ssh"},
		{"example.com", 443, true, ReasonAllowList},
		{"github.com", 443, false, ReasonDenyList},
	}
	for _, tc := range cases {
		got := l.Decide(tc.host, tc.port)
		if got.Allow != tc.allow || got.Reason != tc.reason {
			t.Errorf("Decide(%q, %d) = %+v", tc.host, tc.port, got)
		}
	}
	all := mustLists(t, []string{"example.com"}, []string{"*"}, nil, false)
	if got := all.Decide("example.com", 443); got.Allow || got.Rule != "*" {
		t.Errorf("deny-all: %+v", got)
	}
}

func TestDecideFirstDenyEntryReason(t *testing.T) {
	l := mustLists(t, nil, []string{"*.example.com", "a.example.com"},
		map[string]string{"a.example.com": "second", "*.example.com": "first"}, false)
	if got := l.Decide("a.example.com", 1); got.Reason != "first" || got.Rule != "*.example.com" {
		t.Errorf("got %+v; the first matching entry decides", got)
	}
	// An empty reason (only possible when Lists is built by hand) falls back.
	l.DeniedReasons["*.example.com"] = ""
	if got := l.Decide("a.example.com", 1); got.Reason != ReasonDenyList {
		t.Errorf("got %+v", got)
	}
}

func TestStepString(t *testing.T) {
	want := map[Step]string{
		StepUnavailable: "unavailable", StepMalformed: "malformed", StepDenyList: "deny-list",
		StepAllowList: "allow-list", StepStrict: "strict", StepUndecided: "undecided", 0: "unknown", 200: "unknown",
	}
	for s, w := range want {
		if s.String() != w {
			t.Errorf("Step(%d) = %q; want %q", s, s, w)
		}
	}
}
