package settingsfile

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/policy"
)

// TestParseDecider: what the decider's file accepts, and the exact message
// of every refusal, by the dotted path of the key at fault.
func TestParseDecider(t *testing.T) {
	t.Run("every key", func(t *testing.T) {
		n, err := ParseDecider([]byte(`{"network": {
			"allowedDomains": ["example.com", "*.Example.org:8443", "127.0.0.1:8080", "[::1]"],
			"deniedDomains": ["bad.example.com", "*:25"],
			"deniedDomainReasons": {"bad.example.com": "blocked by policy P-7"},
			"strictAllowlist": true,
			"deniedResolvedAddresses": ["203.0.113.0/24", "2001:db8::1"]}}`))
		if err != nil {
			t.Fatal(err)
		}
		want := &Network{
			AllowedDomains:          []string{"example.com", "*.Example.org:8443", "127.0.0.1:8080", "[::1]"},
			DeniedDomains:           []string{"bad.example.com", "*:25"},
			DeniedDomainReasons:     map[string]string{"bad.example.com": "blocked by policy P-7"},
			StrictAllowlist:         true,
			DeniedResolvedAddresses: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::1/128")},
		}
		lists := n.Lists
		n.Lists = nil
		if !reflect.DeepEqual(n, want) {
			t.Errorf("got %+v\nwant %+v", n, want)
		}
		for _, c := range []struct {
			host string
			port int
			want policy.Decision
		}{
			{"bad.example.com", 80, policy.Decision{Reason: "blocked by policy P-7", Rule: "bad.example.com", Step: policy.StepDenyList, Host: "bad.example.com"}},
			{"a.example.org", 8443, policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "*.Example.org:8443", Step: policy.StepAllowList, Host: "a.example.org"}},
			{"example.com", 25, policy.Decision{Reason: policy.ReasonDenyList, Rule: "*:25", Step: policy.StepDenyList, Host: "example.com"}},
			{"other.test", 80, policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepStrict, Host: "other.test"}},
		} {
			if got := lists.Decide(c.host, c.port); got != c.want {
				t.Errorf("%s:%d: %+v, want %+v", c.host, c.port, got, c.want)
			}
		}
	})
	t.Run("the least", func(t *testing.T) {
		n, err := ParseDecider([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]}}`))
		if err != nil || n.Lists == nil || len(n.Lists.Allowed) != 0 || n.StrictAllowlist || n.DeniedResolvedAddresses != nil {
			t.Fatalf("%+v, %v", n, err)
		}
	})

	const unknown = "unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule"
	for _, c := range []struct {
		name, doc string
		issues    []string
	}{
		{"not an object", `[]`, []string{"(root): Expected object, received array"}},
		{"no network", `{}`, []string{"network: Required"}},
		{"network null", `{"network": null}`, []string{"network: Expected object, received null"}},
		{"lists required", `{"network": {}}`, []string{"network.allowedDomains: Required", "network.deniedDomains: Required"}},
		{"bad entries", `{"network": {"allowedDomains": ["*.com", 7, "ok.example"], "deniedDomains": ["*", "a..b"]}}`, []string{
			`network.allowedDomains.0: "*.com" is too broad: a wildcard needs two labels or more after "*." ("*.example.com"). ` + AllowPatternMessage,
			"network.allowedDomains.1: Expected string, received number",
			`network.deniedDomains.1: "a..b" has an empty label (".."): remove the extra dot`}},
		{"bad reasons", `{"network": {"allowedDomains": [], "deniedDomains": [], "deniedDomainReasons": {"a.example": "", "b.example": 1}}}`, []string{
			"network.deniedDomainReasons.a.example: String must contain at least 1 character(s)",
			"network.deniedDomainReasons.b.example: Expected string, received number"}},
		{"reasons not an object", `{"network": {"allowedDomains": [], "deniedDomains": [], "deniedDomainReasons": []}}`, []string{
			"network.deniedDomainReasons: Expected object, received array"}},
		{"strict not a boolean", `{"network": {"allowedDomains": [], "deniedDomains": [], "strictAllowlist": "yes"}}`, []string{
			"network.strictAllowlist: Expected boolean, received string"}},
		{"bad address ranges", `{"network": {"allowedDomains": [], "deniedDomains": [], "deniedResolvedAddresses": ["10.0.0.0/33", "[::1]", true]}}`, []string{
			"network.deniedResolvedAddresses.0: " + policy.InvalidAddressRangeMessage,
			"network.deniedResolvedAddresses.1: " + policy.InvalidAddressRangeMessage,
			"network.deniedResolvedAddresses.2: Expected string, received boolean"}},
		{"a typo", `{"network": {"allowedDomain": [], "deniedDomains": []}}`, []string{
			"network.allowedDomain: " + unknown + `; did you mean "allowedDomains"?`,
			"network.allowedDomains: Required"}},
		{"srt's other settings", `{"filesystem": {}, "netwrk": {}, "network": {"allowedDomains": [], "deniedDomains": []}}`, []string{
			`filesystem: is not a setting of the decider, whose settings hold the "network" block alone (srt's other settings are for its sandbox); remove it from the decider's settings`,
			`netwrk: is not a setting of the decider, whose settings hold the "network" block alone (srt's other settings are for its sandbox); remove it from the decider's settings; did you mean "network"?`}},
		{"srt's sandbox", `{"network": {"allowedDomains": [], "deniedDomains": [], "allowAllUnixSockets": true}}`, []string{
			"network.allowAllUnixSockets: is not a setting of the decider: it is for srt's sandbox, which the decider has none of; remove it from the decider's settings"}},
		{"srt's proxy", `{"network": {"tlsTerminate": {}, "allowedDomains": [], "deniedDomains": [], "stripResponseHeaders": ["server"]}}`, []string{
			"network.tlsTerminate: is not a setting of the decider: srt-proxy run alone terminates TLS with the CA it reads from its option --ca-fd; remove it from the decider's settings",
			"network.stripResponseHeaders: is not a setting of the decider: srt-proxy run alone takes it as its option --strip-response-header; remove it from the decider's settings"}},
		{"duplicate key", `{"network": {"allowedDomains": [], "allowedDomains": ["x.example"], "deniedDomains": []}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := ParseDecider([]byte(c.doc))
			if n != nil {
				t.Fatalf("accepted: %+v", n)
			}
			if c.issues == nil {
				var se *SyntaxError
				if !errors.As(err, &se) || err.Error() != `is not valid JSON: duplicate key "allowedDomains" at offset 33` {
					t.Fatalf("%v, want the duplicate key's syntax error", err)
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("%v (%T), want an InvalidError", err, err)
			}
			got := []string{}
			for _, is := range ie.Issues {
				got = append(got, is.String())
			}
			if !reflect.DeepEqual(got, c.issues) {
				t.Errorf("issues\n got: %q\nwant: %q", got, c.issues)
			}
			if want := "does not hold a valid config — " + strings.Join(c.issues, "; "); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

// Every key the decider refuses is refused with its own reason.
func TestParseDeciderRefusesEveryOtherKey(t *testing.T) {
	for key, why := range NotTheDeciders {
		_, err := ParseDecider([]byte(`{"network": {"allowedDomains": [], "deniedDomains": [], "` + key + `": null}}`))
		want := "does not hold a valid config — network." + key + ": is not a setting of the decider: " + why + "; remove it from the decider's settings"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", key, err, want)
		}
	}
}
