package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
)

// violation is one call of Engine.Violation.
type violation struct{ line, user string }

// recorder collects the violations an engine records.
type recorder struct {
	mu    sync.Mutex
	lines []violation
}

func (r *recorder) record(line, user string) {
	r.mu.Lock()
	r.lines = append(r.lines, violation{line, user})
	r.mu.Unlock()
}

// take returns the violations recorded since the last take.
func (r *recorder) take() []violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.lines
	r.lines = nil
	return v
}

// asker is an AskHost that answers from fields and remembers its calls.
type asker struct {
	mu     sync.Mutex
	allow  bool
	reason string
	err    error
	calls  []askCall
}

type askCall struct {
	host string
	port int
	user string
}

func (a *asker) ask(_ context.Context, host string, port int, user string) (bool, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, askCall{host, port, user})
	return a.allow, a.reason, a.err
}

func (a *asker) takeCalls() []askCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.calls
	a.calls = nil
	return c
}

// newEngine returns an engine with n in force and its violations recorded.
func newEngine(t testing.TB, n *control.Network, ask bool) (*Engine, *recorder) {
	t.Helper()
	e := New()
	rec := &recorder{}
	e.Violation = rec.record
	if n != nil {
		if err := e.SetNetwork(n, ask); err != nil {
			t.Fatalf("SetNetwork: %v", err)
		}
	}
	return e, rec
}

// line is the violation line §4.2 specifies for a denial.
func line(hostPort, reason string) string {
	return "deny network-outbound " + hostPort + " (" + reason + ")"
}

// userOf is the proxy username srt gives a command with attribution key id.
func userOf(id string) string { return srtlink.UserPrefix + srtlink.KeyLabel(id) }

// settingsNetwork is the network of TestDecideOrder: every kind of entry
// on both lists, with overlaps so the order of the steps shows.
var settingsNetwork = &control.Network{
	AllowedDomains: []string{
		"*.example.org", "github.com", "api.github.com:443", "127.0.0.1:8765",
		"localhost", "[::1]:9000", "evil.example.org", "secret.corp.example",
		"smtp.example.net", "[2001:db8::1]",
	},
	DeniedDomains: []string{
		"evil.example.org", "*.corp.example", "github.com:22", "169.254.169.254",
		"[fd00::1]", "*:25",
	},
	DeniedDomainReasons: map[string]string{
		"evil.example.org": "Evil <host>\nuse good.example.org",
		"*.corp.example":   "internal only",
		"unused.example":   "never fires",
	},
}

func TestDecideOrder(t *testing.T) {
	e, rec := newEngine(t, settingsNetwork, false)
	cases := []struct {
		name string
		host string
		port int
		want policy.Decision
		line string // the violation recorded; "" for none
	}{
		// Step 2 before step 3: an entry on both lists denies.
		{"deny beats allow, reason by exact entry", "evil.example.org", 443,
			policy.Decision{Reason: "Evil <host>\nuse good.example.org", Rule: "evil.example.org", Step: policy.StepDenyList, Host: "evil.example.org"},
			line("evil.example.org:443", "Evil host use good.example.org")},
		{"deny wildcard beats exact allow", "secret.corp.example", 443,
			policy.Decision{Reason: "internal only", Rule: "*.corp.example", Step: policy.StepDenyList, Host: "secret.corp.example"},
			line("secret.corp.example:443", "internal only")},
		{"deny-all port beats allow", "smtp.example.net", 25,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "*:25", Step: policy.StepDenyList, Host: "smtp.example.net"},
			line("smtp.example.net:25", policy.ReasonDenyList)},
		{"deny-all port other port", "smtp.example.net", 587,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "smtp.example.net", Step: policy.StepAllowList, Host: "smtp.example.net"}, ""},
		{"deny port scoped", "github.com", 22,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "github.com:22", Step: policy.StepDenyList, Host: "github.com"},
			line("github.com:22", policy.ReasonDenyList)},
		{"deny port scoped, other port allowed", "github.com", 443,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "github.com", Step: policy.StepAllowList, Host: "github.com"}, ""},

		// §4.1: "*.example.org" is strict subdomains only.
		{"wildcard does not match apex", "example.org", 443,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "example.org"},
			line("example.org:443", policy.ReasonNotAllowed)},
		{"wildcard matches subdomain", "a.example.org", 443,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "*.example.org", Step: policy.StepAllowList, Host: "a.example.org"}, ""},
		{"wildcard matches deeper subdomain", "a.b.example.org", 80,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "*.example.org", Step: policy.StepAllowList, Host: "a.b.example.org"}, ""},
		{"wildcard needs a dot before the base", "badexample.org", 443,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "badexample.org"},
			line("badexample.org:443", policy.ReasonNotAllowed)},
		{"exact name does not match subdomain", "www.github.com", 443,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "www.github.com"},
			line("www.github.com:443", policy.ReasonNotAllowed)},

		// Canonicalisation; the violation names the host as requested.
		{"case-insensitive allow", "GitHub.COM", 443,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "github.com", Step: policy.StepAllowList, Host: "github.com"}, ""},
		{"case-insensitive deny", "EVIL.Example.ORG", 80,
			policy.Decision{Reason: "Evil <host>\nuse good.example.org", Rule: "evil.example.org", Step: policy.StepDenyList, Host: "evil.example.org"},
			line("EVIL.Example.ORG:80", "Evil host use good.example.org")},
		{"trailing dot allow", "github.com.", 443,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "github.com", Step: policy.StepAllowList, Host: "github.com"}, ""},
		{"trailing dot deny", "evil.example.org.", 443,
			policy.Decision{Reason: "Evil <host>\nuse good.example.org", Rule: "evil.example.org", Step: policy.StepDenyList, Host: "evil.example.org"},
			line("evil.example.org.:443", "Evil host use good.example.org")},
		{"trailing dot wildcard apex", "Example.ORG.", 443,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "example.org"},
			line("Example.ORG.:443", policy.ReasonNotAllowed)},
		{"localhost", "LOCALHOST", 3000,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "localhost", Step: policy.StepAllowList, Host: "localhost"}, ""},

		// IP literals and ports.
		{"ipv4 literal with its port", "127.0.0.1", 8765,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "127.0.0.1:8765", Step: policy.StepAllowList, Host: "127.0.0.1"}, ""},
		{"ipv4 literal other port", "127.0.0.1", 8766,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "127.0.0.1"},
			line("127.0.0.1:8766", policy.ReasonNotAllowed)},
		{"ipv4 shorthand", "127.1", 8765,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "127.0.0.1:8765", Step: policy.StepAllowList, Host: "127.0.0.1"}, ""},
		{"ipv4 integer denied", "2852039166", 80,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "169.254.169.254", Step: policy.StepDenyList, Host: "169.254.169.254"},
			line("2852039166:80", policy.ReasonDenyList)},
		{"ipv4-mapped ipv6 denied", "[::ffff:169.254.169.254]", 80,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "169.254.169.254", Step: policy.StepDenyList, Host: "169.254.169.254"},
			line("[::ffff:169.254.169.254]:80", policy.ReasonDenyList)},
		{"ipv6 unbracketed", "::1", 9000,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "[::1]:9000", Step: policy.StepAllowList, Host: "::1"}, ""},
		{"ipv6 bracketed", "[::1]", 9000,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "[::1]:9000", Step: policy.StepAllowList, Host: "::1"}, ""},
		{"ipv6 expanded", "[0:0:0:0:0:0:0:1]", 9000,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "[::1]:9000", Step: policy.StepAllowList, Host: "::1"}, ""},
		{"ipv6 other port, unbracketed", "::1", 9001,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "::1"},
			line("[::1]:9001", policy.ReasonNotAllowed)},
		{"ipv6 other port, bracketed", "[::1]", 9001,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "::1"},
			line("[::1]:9001", policy.ReasonNotAllowed)},
		{"ipv6 every port", "2001:DB8::1", 8080,
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "[2001:db8::1]", Step: policy.StepAllowList, Host: "2001:db8::1"}, ""},
		{"ipv6 denied", "[fd00:0::1]", 443,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "[fd00::1]", Step: policy.StepDenyList, Host: "fd00::1"},
			line("[fd00:0::1]:443", policy.ReasonDenyList)},
		{"wildcard never matches an ip", "10.0.0.1", 443,
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: "10.0.0.1"},
			line("10.0.0.1:443", policy.ReasonNotAllowed)},

		// Step 1: a malformed host is denied before any list.
		{"malformed path", "github.com/x", 443,
			policy.Decision{Reason: policy.ReasonMalformedHost, Step: policy.StepMalformed},
			line("github.com/x:443", policy.ReasonMalformedHost)},
		{"malformed space", "git hub.com", 443,
			policy.Decision{Reason: policy.ReasonMalformedHost, Step: policy.StepMalformed},
			line("git hub.com:443", policy.ReasonMalformedHost)},
		{"malformed zone", "[fe80::1%eth0]", 443,
			policy.Decision{Reason: policy.ReasonMalformedHost, Step: policy.StepMalformed},
			line("[fe80::1%eth0]:443", policy.ReasonMalformedHost)},
		{"malformed empty", "", 443,
			policy.Decision{Reason: policy.ReasonMalformedHost, Step: policy.StepMalformed},
			line(":443", policy.ReasonMalformedHost)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Decide(context.Background(), tc.host, tc.port, "srt")
			if got != tc.want {
				t.Errorf("Decide(%q, %d) =\n %+v\nwant\n %+v", tc.host, tc.port, got, tc.want)
			}
			var want []violation
			if tc.line != "" {
				want = []violation{{tc.line, "srt"}}
			}
			if v := rec.take(); !reflect.DeepEqual(v, want) {
				t.Errorf("violations %q; want %q", v, want)
			}
		})
	}
}

// TestDecideNoPolicy: step 1, before SetNetwork nothing is allowed and no
// later step is consulted.
func TestDecideNoPolicy(t *testing.T) {
	e, rec := newEngine(t, nil, false)
	a := &asker{allow: true}
	e.AskHost = a.ask
	if err := e.Register("command-id-0123456789abc", []string{"github.com"}); err != nil {
		t.Fatal(err)
	}
	user := userOf("command-id-0123456789abc")
	got := e.Decide(context.Background(), "github.com", 443, user)
	want := policy.Decision{Reason: policy.ReasonUnavailable, Step: policy.StepUnavailable}
	if got != want {
		t.Errorf("Decide = %+v; want %+v", got, want)
	}
	if v := rec.take(); !reflect.DeepEqual(v, []violation{{line("github.com:443", "sandbox policy unavailable"), user}}) {
		t.Errorf("violations %q", v)
	}
	if c := a.takeCalls(); c != nil {
		t.Errorf("ask callback consulted without a policy: %v", c)
	}
	if n := e.Network(); n != nil {
		t.Errorf("Network() = %+v before SetNetwork; want nil", n)
	}
}

func TestDecideStrict(t *testing.T) {
	n := &control.Network{
		AllowedDomains:  []string{"github.com"},
		DeniedDomains:   []string{"evil.example.org"},
		StrictAllowlist: true,
	}
	e, rec := newEngine(t, n, true)
	a := &asker{allow: true}
	e.AskHost = a.ask
	const id = "command-id-0123456789abc"
	if err := e.Register(id, []string{"pypi.org", "evil.example.org"}); err != nil {
		t.Fatal(err)
	}
	user := userOf(id)
	cases := []struct {
		name string
		host string
		want policy.Decision
		line string
	}{
		{"allow list still allows", "github.com",
			policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: "github.com", Step: policy.StepAllowList, Host: "github.com"}, ""},
		{"deny list still denies", "evil.example.org",
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "evil.example.org", Step: policy.StepDenyList, Host: "evil.example.org"},
			line("evil.example.org:443", policy.ReasonDenyList)},
		// Step 4: no per-command list, no ask callback.
		{"per-command list skipped", "pypi.org",
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepStrict, Host: "pypi.org"},
			line("pypi.org:443", policy.ReasonNotAllowed)},
		{"ask callback skipped", "other.example",
			policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepStrict, Host: "other.example"},
			line("other.example:443", policy.ReasonNotAllowed)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.Decide(context.Background(), tc.host, 443, user); got != tc.want {
				t.Errorf("Decide(%q) =\n %+v\nwant\n %+v", tc.host, got, tc.want)
			}
			var want []violation
			if tc.line != "" {
				want = []violation{{tc.line, user}}
			}
			if v := rec.take(); !reflect.DeepEqual(v, want) {
				t.Errorf("violations %q; want %q", v, want)
			}
			if c := a.takeCalls(); c != nil {
				t.Errorf("ask callback consulted under strictAllowlist: %v", c)
			}
		})
	}
}

func TestCommandLists(t *testing.T) {
	const (
		idA = "command-a-0123456789abcdef"
		idB = "command-b-0123456789abcdef"
	)
	// Only the first 100 UTF-16 units of a key matter (§9.3): two keys
	// that share them are the same command.
	long := strings.Repeat("x", 100)
	n := &control.Network{
		AllowedDomains: []string{"github.com"},
		DeniedDomains:  []string{"evil.example.org", "*.corp.example"},
	}
	e, rec := newEngine(t, n, false)
	for id, allowed := range map[string][]string{
		idA:           {"pypi.org", "*.pythonhosted.org", "files.example:8443", "evil.example.org", "[::1]:5000"},
		idB:           {"registry.npmjs.org"},
		long + "tail": {"long.example"},
	} {
		if err := e.Register(id, allowed); err != nil {
			t.Fatalf("Register(%q): %v", id, err)
		}
	}
	allowA := func(host, rule string) policy.Decision {
		return policy.Decision{Allow: true, Reason: policy.ReasonAllowList, Rule: rule, Step: policy.StepAllowList, Host: host}
	}
	undecided := func(host string) policy.Decision {
		return policy.Decision{Reason: policy.ReasonNotAllowed, Step: policy.StepUndecided, Host: host}
	}
	cases := []struct {
		name string
		user string
		host string
		port int
		want policy.Decision
	}{
		{"own list allows", userOf(idA), "pypi.org", 443, allowA("pypi.org", "pypi.org")},
		{"own list canonical host", userOf(idA), "PyPI.org.", 443, allowA("pypi.org", "pypi.org")},
		{"own wildcard subdomain", userOf(idA), "files.pythonhosted.org", 443, allowA("files.pythonhosted.org", "*.pythonhosted.org")},
		{"own wildcard not apex", userOf(idA), "pythonhosted.org", 443, undecided("pythonhosted.org")},
		{"own port entry", userOf(idA), "files.example", 8443, allowA("files.example", "files.example:8443")},
		{"own port entry other port", userOf(idA), "files.example", 443, undecided("files.example")},
		{"own ipv6 entry", userOf(idA), "::1", 5000, allowA("::1", "[::1]:5000")},
		{"global allow list still applies", userOf(idA), "github.com", 443, allowA("github.com", "github.com")},
		{"deny list beats own list", userOf(idA), "evil.example.org", 443,
			policy.Decision{Reason: policy.ReasonDenyList, Rule: "evil.example.org", Step: policy.StepDenyList, Host: "evil.example.org"}},
		{"another command's list", userOf(idB), "pypi.org", 443, undecided("pypi.org")},
		{"second command's own list", userOf(idB), "registry.npmjs.org", 443, allowA("registry.npmjs.org", "registry.npmjs.org")},
		{"unregistered key", userOf("never-registered-0123456789"), "pypi.org", 443, undecided("pypi.org")},
		{"key cut to 100 units", userOf(long + "other tail"), "long.example", 443, allowA("long.example", "long.example")},
		{"bare srt user", "srt", "pypi.org", 443, undecided("pypi.org")},
		{"empty user", "", "pypi.org", 443, undecided("pypi.org")},
		{"label without srt prefix", srtlink.KeyLabel(idA), "pypi.org", 443, undecided("pypi.org")},
		{"raw id as label", "srt." + idA, "pypi.org", 443, undecided("pypi.org")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Decide(context.Background(), tc.host, tc.port, tc.user)
			if got != tc.want {
				t.Errorf("Decide(%q, %d, %q) =\n %+v\nwant\n %+v", tc.host, tc.port, tc.user, got, tc.want)
			}
			v := rec.take()
			if got.Allow != (len(v) == 0) {
				t.Errorf("violations %q for allow=%v", v, got.Allow)
			}
		})
	}
}

func TestRegisterLifecycle(t *testing.T) {
	const id = "command-id-0123456789abc"
	user := userOf(id)
	e, _ := newEngine(t, &control.Network{AllowedDomains: []string{}, DeniedDomains: []string{}}, false)
	allowed := func(host string) bool { return e.Decide(context.Background(), host, 443, user).Allow }

	if allowed("a.example") {
		t.Fatal("allowed before Register")
	}
	if err := e.Register(id, []string{"a.example"}); err != nil {
		t.Fatal(err)
	}
	if !allowed("a.example") {
		t.Fatal("not allowed after Register")
	}

	// Registering again replaces the list.
	if err := e.Register(id, []string{"b.example"}); err != nil {
		t.Fatal(err)
	}
	if allowed("a.example") || !allowed("b.example") {
		t.Fatal("re-Register did not replace the list")
	}

	// An invalid entry is refused, naming it, and the list in force stays.
	for _, bad := range []string{"*.com", "*", "evil.com:443.allowed.com", "2001:db8::1:443", "myhost", "example.com:0"} {
		err := e.Register(id, []string{"c.example", bad})
		if err == nil {
			t.Errorf("Register(%q) accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("invalid allowedDomains entry %q", bad)) {
			t.Errorf("Register(%q) error %q does not name the entry", bad, err)
		}
		var pe *policy.PatternError
		if !errors.As(err, &pe) || pe.Entry != bad {
			t.Errorf("Register(%q) error %q does not wrap the *policy.PatternError", bad, err)
		}
	}
	if !allowed("b.example") || allowed("c.example") {
		t.Fatal("a refused Register changed the list in force")
	}

	// An empty list allows nothing of its own.
	if err := e.Register(id, nil); err != nil {
		t.Fatal(err)
	}
	if allowed("b.example") {
		t.Fatal("an empty Register kept the old list")
	}

	if err := e.Register(id, []string{"d.example"}); err != nil {
		t.Fatal(err)
	}
	e.Unregister(id)
	if allowed("d.example") {
		t.Fatal("allowed after Unregister")
	}
	e.Unregister(id)                 // absent: ignored
	e.Unregister("never-registered") // absent: ignored

	// The lists outlive a settings update.
	if err := e.Register(id, []string{"e.example"}); err != nil {
		t.Fatal(err)
	}
	if err := e.SetNetwork(&control.Network{AllowedDomains: []string{"f.example"}, DeniedDomains: []string{}}, false); err != nil {
		t.Fatal(err)
	}
	if !allowed("e.example") || !allowed("f.example") {
		t.Fatal("per-command list or new settings not in force after SetNetwork")
	}
}

func TestAsk(t *testing.T) {
	const id = "command-id-0123456789abc"
	user := userOf(id)
	n := &control.Network{
		AllowedDomains: []string{"github.com"},
		DeniedDomains:  []string{"evil.example.org"},
	}
	cases := []struct {
		name   string
		allow  bool
		reason string
		err    error
		want   policy.Decision
		line   string
	}{
		{"true allows", true, "", nil,
			policy.Decision{Allow: true, Reason: "allowed by the host", Step: policy.StepUndecided, Host: "ask.example"}, ""},
		{"true with a reason allows", true, "fine", nil,
			policy.Decision{Allow: true, Reason: "allowed by the host", Step: policy.StepUndecided, Host: "ask.example"}, ""},
		{"false denies as user denied", false, "", nil,
			policy.Decision{Reason: policy.ReasonUserDenied, Step: policy.StepUndecided, Host: "ask.example"},
			line("Ask.Example.:8443", "user denied")},
		// §9.2, observed: the reason is sanitised in the violation line.
		{"false with a reason", false, "not\tapproved <x> \u200bnow", nil,
			policy.Decision{Reason: "not\tapproved <x> \u200bnow", Step: policy.StepUndecided, Host: "ask.example"},
			line("Ask.Example.:8443", "not approved x  now")},
		// §9.2: a reason that sanitises to nothing is "user denied".
		{"false with an invisible reason", false, " \u200b<>\n", nil,
			policy.Decision{Reason: policy.ReasonUserDenied, Step: policy.StepUndecided, Host: "ask.example"},
			line("Ask.Example.:8443", "user denied")},
		{"failure denies", false, "", errors.New("boom"),
			policy.Decision{Reason: policy.ReasonPromptFailed, Step: policy.StepUndecided, Host: "ask.example"},
			line("Ask.Example.:8443", "permission prompt failed")},
		{"failure beats allow", true, "", errors.New("boom"),
			policy.Decision{Reason: policy.ReasonPromptFailed, Step: policy.StepUndecided, Host: "ask.example"},
			line("Ask.Example.:8443", "permission prompt failed")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, rec := newEngine(t, n, true)
			a := &asker{allow: tc.allow, reason: tc.reason, err: tc.err}
			e.AskHost = a.ask
			got := e.Decide(context.Background(), "Ask.Example.", 8443, user)
			if got != tc.want {
				t.Errorf("Decide =\n %+v\nwant\n %+v", got, tc.want)
			}
			// Asked once, with the canonical host, the port and the user.
			if c := a.takeCalls(); !reflect.DeepEqual(c, []askCall{{"ask.example", 8443, user}}) {
				t.Errorf("ask calls %+v", c)
			}
			var want []violation
			if tc.line != "" {
				want = []violation{{tc.line, user}}
			}
			if v := rec.take(); !reflect.DeepEqual(v, want) {
				t.Errorf("violations %q; want %q", v, want)
			}
		})
	}
}

// TestAskOnlyWhenUndecided: the callback is step 6, consulted only when no
// list decides, and only when srt says the host has one.
func TestAskOnlyWhenUndecided(t *testing.T) {
	const id = "command-id-0123456789abc"
	n := &control.Network{
		AllowedDomains: []string{"github.com"},
		DeniedDomains:  []string{"evil.example.org"},
	}
	cases := []struct {
		name    string
		ask     bool
		noAsker bool
		host    string
		asked   bool
		allow   bool
		reason  string
	}{
		{"deny list decides", true, false, "evil.example.org", false, false, policy.ReasonDenyList},
		{"allow list decides", true, false, "github.com", false, true, policy.ReasonAllowList},
		{"per-command list decides", true, false, "pypi.org", false, true, policy.ReasonAllowList},
		{"malformed host", true, false, "a b", false, false, policy.ReasonMalformedHost},
		{"undecided is asked", true, false, "other.example", true, true, "allowed by the host"},
		{"no ask callback announced", false, false, "other.example", false, false, policy.ReasonNotAllowed},
		{"ask announced but no AskHost", true, true, "other.example", false, false, policy.ReasonNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, rec := newEngine(t, n, tc.ask)
			a := &asker{allow: true}
			if !tc.noAsker {
				e.AskHost = a.ask
			}
			if err := e.Register(id, []string{"pypi.org"}); err != nil {
				t.Fatal(err)
			}
			got := e.Decide(context.Background(), tc.host, 443, userOf(id))
			if got.Allow != tc.allow || got.Reason != tc.reason {
				t.Errorf("Decide(%q) = %+v; want allow=%v reason %q", tc.host, got, tc.allow, tc.reason)
			}
			if asked := len(a.takeCalls()) > 0; asked != tc.asked {
				t.Errorf("asked = %v; want %v", asked, tc.asked)
			}
			// Settle never asks, is final exactly when Decide would not
			// ask, and then says what Decide says.
			rec.take()
			settled, final := e.Settle(tc.host, 443, userOf(id))
			if final == tc.asked || len(a.takeCalls()) > 0 {
				t.Errorf("Settle(%q): final = %v, or it asked", tc.host, final)
			}
			if final && (settled.Allow != tc.allow || settled.Reason != tc.reason) {
				t.Errorf("Settle(%q) = %+v; want allow=%v reason %q", tc.host, settled, tc.allow, tc.reason)
			}
			if want := final && !tc.allow; (len(rec.take()) == 1) != want {
				t.Errorf("Settle(%q) recorded a violation: %v, want %v", tc.host, !want, want)
			}
		})
	}
}

// TestAskNoCaching: every connection asks again (§4.2), and an update that
// withdraws the ask callback stops the questions.
func TestAskNoCaching(t *testing.T) {
	n := &control.Network{AllowedDomains: []string{}, DeniedDomains: []string{}}
	e, _ := newEngine(t, n, true)
	a := &asker{allow: true}
	e.AskHost = a.ask
	for i := range 3 {
		if d := e.Decide(context.Background(), "ask.example", 443, "srt"); !d.Allow {
			t.Fatalf("Decide %d = %+v", i, d)
		}
	}
	if c := a.takeCalls(); len(c) != 3 {
		t.Errorf("asked %d times for 3 connections; want 3", len(c))
	}
	a.mu.Lock()
	a.allow = false
	a.mu.Unlock()
	if d := e.Decide(context.Background(), "ask.example", 443, "srt"); d.Allow {
		t.Errorf("a changed answer was not honoured: %+v", d)
	}
	if err := e.SetNetwork(n, false); err != nil {
		t.Fatal(err)
	}
	a.takeCalls()
	if d := e.Decide(context.Background(), "ask.example", 443, "srt"); d.Allow || d.Reason != policy.ReasonNotAllowed {
		t.Errorf("after ask withdrawn: %+v", d)
	}
	if c := a.takeCalls(); c != nil {
		t.Errorf("asked after the ask callback was withdrawn: %v", c)
	}
}

// TestAskContext: the callback gets the request's context, so a request
// that goes away stops waiting, and that is a failed prompt.
func TestAskContext(t *testing.T) {
	type key struct{}
	n := &control.Network{AllowedDomains: []string{}, DeniedDomains: []string{}}
	e, rec := newEngine(t, n, true)
	e.AskHost = func(ctx context.Context, host string, port int, user string) (bool, string, error) {
		if ctx.Value(key{}) != "req" {
			t.Error("AskHost did not get the request's context")
		}
		<-ctx.Done()
		return false, "", ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "req"))
	cancel()
	d := e.Decide(ctx, "ask.example", 443, "srt")
	if d.Allow || d.Reason != policy.ReasonPromptFailed {
		t.Errorf("Decide = %+v; want %q", d, policy.ReasonPromptFailed)
	}
	if v := rec.take(); !reflect.DeepEqual(v, []violation{{line("ask.example:443", "permission prompt failed"), "srt"}}) {
		t.Errorf("violations %q", v)
	}
}

func TestRefused(t *testing.T) {
	cases := []struct {
		name   string
		host   string
		port   int
		reason string
		line   string
	}{
		{"resolved address", "myapp.test", 8765, "resolved to a loopback address",
			"deny network-outbound myapp.test:8765 (resolved to a loopback address)"},
		{"several classes", "x.test", 80, "resolved to a loopback address / a link-local address",
			"deny network-outbound x.test:80 (resolved to a loopback address / a link-local address)"},
		{"reason sanitised", "x.test", 443, "resolved to bad\r\n<b>reason</b>\u202e",
			"deny network-outbound x.test:443 (resolved to bad breason/b)"},
		{"ipv6 host", "fd00::2", 443, "resolved to a listed address",
			"deny network-outbound [fd00::2]:443 (resolved to a listed address)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, rec := newEngine(t, nil, false)
			e.Refused(Refusal{Kind: "http", Method: "GET", Host: tc.host, Port: tc.port, Path: "/", Reason: tc.reason, User: "srt.dXNlcg=="})
			if v := rec.take(); !reflect.DeepEqual(v, []violation{{tc.line, "srt.dXNlcg=="}}) {
				t.Errorf("violations %q; want %q", v, tc.line)
			}
		})
	}
}

// TestRefusedByProxyRules: the refusals srt-proxy's request rules make
// after an allow read as the reference's lines; an unreachable upstream
// is no violation.
func TestRefusedByProxyRules(t *testing.T) {
	cases := []struct {
		name string
		r    Refusal
		line string // "" for none
	}{
		{"opaque CONNECT", Refusal{Kind: "connect", Method: "CONNECT", Host: "pin.test", Port: 443, Path: "*", Reason: "this proxy does not tunnel CONNECTs it cannot inspect"},
			"deny http-request CONNECT pin.test:443 (this proxy does not tunnel CONNECTs it cannot inspect)"},
		{"SOCKS", Refusal{Kind: "socks", Method: "CONNECT", Host: "::1", Port: 22, Path: "*", Reason: "refuseOpaqueTunnels"},
			"deny socks-tunnel [::1]:22 (refuseOpaqueTunnels)"},
		{"plain HTTP", Refusal{Kind: "http", Method: "POST", Host: "a.test", Port: 80, Path: "/p", Query: true, Reason: "headers"},
			"deny http-request POST http://a.test/p?… (headers)"},
		{"terminated", Refusal{Kind: "http", Method: "GET", Host: "a.test", Port: 8443, Path: "/", TLS: true, Reason: "x"},
			"deny http-request GET https://a.test:8443/ (x)"},
		{"unreachable", Refusal{Kind: "connect", Host: "a.test", Port: 443, Reason: "upstream unreachable: a.test:443: refused"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, rec := newEngine(t, nil, false)
			tc.r.User = "srt"
			e.Refused(tc.r)
			var want []violation
			if tc.line != "" {
				want = []violation{{tc.line, "srt"}}
			}
			if v := rec.take(); !reflect.DeepEqual(v, want) {
				t.Errorf("violations %q; want %q", v, want)
			}
		})
	}
}

func TestViolationLineHostPort(t *testing.T) {
	cases := []struct {
		host string
		port int
		want string
	}{
		{"example.com", 80, "example.com:80"},
		{"Example.COM.", 443, "Example.COM.:443"},
		{"1.2.3.4", 65535, "1.2.3.4:65535"},
		{"::1", 443, "[::1]:443"},
		{"2001:db8::1", 8443, "[2001:db8::1]:8443"},
		// Bracketed as requested: not bracketed twice.
		{"[::1]", 443, "[::1]:443"},
		{"[2001:db8::1]", 8443, "[2001:db8::1]:8443"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := hostPort(tc.host, tc.port); got != tc.want {
				t.Errorf("hostPort(%q, %d) = %q; want %q", tc.host, tc.port, got, tc.want)
			}
		})
	}
}

// TestNoViolationCallback: a nil Violation records nothing and does not
// get in the way of a decision.
func TestNoViolationCallback(t *testing.T) {
	e := New()
	if d := e.Decide(context.Background(), "a.example", 443, "srt"); d.Allow || d.Reason != policy.ReasonUnavailable {
		t.Errorf("Decide = %+v", d)
	}
	e.Refused(Refusal{Kind: "connect", Host: "a.example", Port: 443, Reason: "resolved to a loopback address", User: "srt"})
}

func TestSetNetworkRefuses(t *testing.T) {
	good := &control.Network{AllowedDomains: []string{"good.example"}, DeniedDomains: []string{"bad.example"}}
	cases := []struct {
		name    string
		n       *control.Network
		want    string // in the error text
		wantErr any    // a pointer to a type errors.As must find; nil: none
	}{
		{"nil network", nil, "network", nil},
		{"overly broad allow", &control.Network{AllowedDomains: []string{"ok.example", "*.com"}},
			`allowedDomains.1: "*.com" is too broad`, new(*policy.PatternError)},
		{"bare star allow", &control.Network{AllowedDomains: []string{"*"}},
			`allowedDomains.0: "*" would match every host`, new(policy.FieldError)},
		{"ambiguous ipv6 allow", &control.Network{AllowedDomains: []string{"2001:db8::1:443"}},
			"allowedDomains.0", new(*policy.PatternError)},
		{"split port deny", &control.Network{DeniedDomains: []string{"evil.com:443.allowed.com"}},
			`deniedDomains.0: "evil.com:443.allowed.com" has ":443.allowed.com" after ":", which is not a port: a port is a number from 1 to 65535. ` + policy.InvalidDenyPatternMessage, new(*policy.PatternError)},
		{"empty reason", &control.Network{DeniedDomains: []string{"x.example"}, DeniedDomainReasons: map[string]string{"x.example": ""}},
			"deniedDomainReasons.x.example: " + policy.EmptyReasonMessage, new(policy.FieldError)},
		{"bad resolved address", &control.Network{DeniedResolvedAddresses: []string{"10.0.0.0/8", "10.0.0.0/33"}},
			`deniedResolvedAddresses "10.0.0.0/33": ` + policy.InvalidAddressRangeMessage, new(*policy.AddressRangeError)},
		{"bracketed resolved address", &control.Network{DeniedResolvedAddresses: []string{"[::1]"}},
			`deniedResolvedAddresses "[::1]"`, new(*policy.AddressRangeError)},
		{"short mapped range", &control.Network{DeniedResolvedAddresses: []string{"::ffff:0:0/95"}},
			`deniedResolvedAddresses "::ffff:0:0/95"`, new(*policy.AddressRangeError)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, good, false)
			a := &asker{allow: true}
			e.AskHost = a.ask
			err := e.SetNetwork(tc.n, true)
			if err == nil {
				t.Fatal("SetNetwork accepted it")
			}
			if !strings.HasPrefix(err.Error(), "engine: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.As(err, tc.wantErr) {
				t.Errorf("error %q does not wrap %T", err, tc.wantErr)
			}
			// The settings in force stay, the ask flag included.
			if e.Network() != good {
				t.Errorf("Network() = %+v; want the previous settings", e.Network())
			}
			if d := e.Decide(context.Background(), "good.example", 443, "srt"); !d.Allow {
				t.Errorf("previous allow list lost: %+v", d)
			}
			if d := e.Decide(context.Background(), "bad.example", 443, "srt"); d.Allow || d.Step != policy.StepDenyList {
				t.Errorf("previous deny list lost: %+v", d)
			}
			if d := e.Decide(context.Background(), "other.example", 443, "srt"); d.Allow || a.takeCalls() != nil {
				t.Errorf("ask flag of the refused settings applied: %+v", d)
			}
		})
	}
}

func TestSetNetworkApplies(t *testing.T) {
	e, _ := newEngine(t, nil, false)
	first := &control.Network{
		AllowedDomains:          []string{"a.example"},
		DeniedDomains:           []string{"b.example"},
		DeniedResolvedAddresses: []string{"10.0.0.0/8", "fc00::/7", "192.168.1.10"},
	}
	if err := e.SetNetwork(first, false); err != nil {
		t.Fatal(err)
	}
	if e.Network() != first {
		t.Errorf("Network() = %+v; want the settings given", e.Network())
	}
	if !e.Decide(context.Background(), "a.example", 443, "srt").Allow {
		t.Error("a.example not allowed")
	}
	// A live update: the next request uses the new lists.
	second := &control.Network{
		AllowedDomains:      []string{"b.example"},
		DeniedDomains:       []string{"a.example"},
		DeniedDomainReasons: map[string]string{"a.example": "withdrawn"},
	}
	if err := e.SetNetwork(second, false); err != nil {
		t.Fatal(err)
	}
	if e.Network() != second {
		t.Errorf("Network() = %+v; want the update", e.Network())
	}
	if d := e.Decide(context.Background(), "a.example", 443, "srt"); d.Allow || d.Reason != "withdrawn" {
		t.Errorf("a.example after update: %+v", d)
	}
	if d := e.Decide(context.Background(), "b.example", 443, "srt"); !d.Allow {
		t.Errorf("b.example after update: %+v", d)
	}
	// Empty lists: nothing allowed (§3.1, "[] = no network").
	if err := e.SetNetwork(&control.Network{}, false); err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(context.Background(), "b.example", 443, "srt"); d.Allow || d.Reason != policy.ReasonNotAllowed {
		t.Errorf("b.example with empty lists: %+v", d)
	}
}

// The attribution user's vectors (shared/srtlink/users.json), the
// decider's side: a command's list, registered under its key, applies to
// the requests of the user srt makes of that key (srtlink.UserFor), and
// to no other user.
func TestUserVectors(t *testing.T) {
	e, _ := newEngine(t, &control.Network{AllowedDomains: []string{}, DeniedDomains: []string{}}, false)
	for _, c := range srtlinktest.Keys(t) {
		if err := e.Register(c.Key, []string{"own.example"}); err != nil {
			t.Fatal(err)
		}
		// The bare user names no command: a key too long for a user of
		// its own gets no list.
		want := c.User != srtlink.BareUser
		if d := e.Decide(context.Background(), "own.example", 443, c.User); d.Allow != want {
			t.Errorf("%s: the command's own list applies to %q: %v, want %v", c.Name, c.User, d.Allow, want)
		}
		e.Unregister(c.Key)
	}
	const key = "test"
	if err := e.Register(key, []string{"own.example"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range srtlinktest.Users(t) {
		want := c.Label != "" && c.Label == srtlink.KeyLabel(key)
		if d := e.Decide(context.Background(), "own.example", 443, c.User); d.Allow != want {
			t.Errorf("%s: the list of key %q applies to %q: %v, want %v", c.Name, key, c.User, d.Allow, want)
		}
	}
}

// TestConcurrent: updates, registrations and decisions in parallel; every
// decision is one the settings in force at some point would give.
func TestConcurrent(t *testing.T) {
	allowA := &control.Network{AllowedDomains: []string{"a.example"}, DeniedDomains: []string{}}
	allowB := &control.Network{AllowedDomains: []string{"b.example"}, DeniedDomains: []string{}}
	e, _ := newEngine(t, allowA, false)
	const id = "command-id-0123456789abc"
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := allowA
			if i%2 == 1 {
				n = allowB
			}
			if err := e.SetNetwork(n, false); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := e.Register(id, []string{"c.example"}); err != nil {
				t.Error(err)
				return
			}
			e.Unregister(id)
		}
	}()
	for range 2000 {
		if d := e.Decide(context.Background(), "z.example", 443, userOf(id)); d.Allow {
			t.Fatalf("z.example allowed: %+v", d)
		}
		if d := e.Decide(context.Background(), "a.example", 443, "srt"); d.Allow && d.Rule != "a.example" {
			t.Fatalf("a.example: %+v", d)
		}
	}
	close(stop)
	wg.Wait()
}
