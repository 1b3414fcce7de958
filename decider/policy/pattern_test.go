package policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// patternWant describes a parsed entry; kind "" means the entry is invalid.
type patternWant struct {
	kind string // "name", "wildcard", "ip", "all"
	host string
	port int
}

func describeKind(p Pattern) string {
	switch {
	case p.DenyAll():
		return "all"
	case p.IsWildcard():
		return "wildcard"
	case p.IsIP():
		return "ip"
	case p.kind == kindName:
		return "name"
	}
	return "?"
}

var allowCases = []struct {
	name string
	in   string
	want patternWant
}{
	// Exact names.
	{"name", "example.com", patternWant{"name", "example.com", 0}},
	{"name with port", "api.github.com:443", patternWant{"name", "api.github.com", 443}},
	{"uppercase stored lower", "API.GitHub.COM", patternWant{"name", "api.github.com", 0}},
	{"underscore label", "_dmarc.example.com", patternWant{"name", "_dmarc.example.com", 0}},
	{"hyphen edges", "-a-.example.com", patternWant{"name", "-a-.example.com", 0}},
	{"punycode", "xn--r8jz45g.jp", patternWant{"name", "xn--r8jz45g.jp", 0}},
	{"digit labels not last", "1.2.3.example", patternWant{"name", "1.2.3.example", 0}},
	{"hex-looking last label", "a.0xg", patternWant{"name", "a.0xg", 0}},
	{"localhost", "localhost", patternWant{"name", "localhost", 0}},
	{"localhost port", "localhost:3000", patternWant{"name", "localhost", 3000}},
	{"localhost uppercase", "LocalHost", patternWant{"name", "localhost", 0}},
	{"sub of localhost", "app.localhost", patternWant{"name", "app.localhost", 0}},
	{"port 1", "example.com:1", patternWant{"name", "example.com", 1}},
	{"port 65535", "example.com:65535", patternWant{"name", "example.com", 65535}},
	{"name 255 bytes", strings.Repeat("a.", 127) + "b", patternWant{"name", strings.Repeat("a.", 127) + "b", 0}},
	{"single label", "myhost", patternWant{}},
	{"leading dot", ".example.com", patternWant{}},
	{"trailing dot", "example.com.", patternWant{}},
	{"empty label", "a..example.com", patternWant{}},
	{"empty", "", patternWant{}},
	{"scheme", "https://example.com", patternWant{}},
	{"path", "example.com/path", patternWant{}},
	{"port 0", "example.com:0", patternWant{}},
	{"port 65536", "example.com:65536", patternWant{}},
	{"port leading zero", "example.com:0443", patternWant{}},
	{"port six digits", "example.com:100000", patternWant{}},
	{"port sign", "example.com:+443", patternWant{}},
	{"port empty", "example.com:", patternWant{}},
	{"port not numeric", "example.com:https", patternWant{}},
	{"smuggled suffix", "evil.com:443.allowed.com", patternWant{}},
	{"two ports", "example.com:443:80", patternWant{}},
	{"space", "exa mple.com", patternWant{}},
	{"at sign", "user@example.com", patternWant{}},
	{"non-ascii idn", "例え.jp", patternWant{}},
	{"kelvin sign", "\u212aexample.com", patternWant{}},
	{"nul byte", "evil.com\x00.allowed.com", patternWant{}},
	{"name too long", strings.Repeat("a.", 128) + "b", patternWant{}},
	{"percent", "a%2e.example.com", patternWant{}},
	{"numeric last label", "example.123", patternWant{}},
	{"hex last label", "example.0x1f", patternWant{}},
	// Wildcards.
	{"wildcard", "*.example.com", patternWant{"wildcard", "example.com", 0}},
	{"wildcard port", "*.example.com:8443", patternWant{"wildcard", "example.com", 8443}},
	{"wildcard uppercase", "*.Example.COM", patternWant{"wildcard", "example.com", 0}},
	{"wildcard deep", "*.a.b.example.com", patternWant{"wildcard", "a.b.example.com", 0}},
	{"wildcard under localhost", "*.app.localhost", patternWant{"wildcard", "app.localhost", 0}},
	{"wildcard tld", "*.com", patternWant{}},
	{"wildcard localhost", "*.localhost", patternWant{}},
	{"bare star", "*", patternWant{}},
	{"star port", "*:443", patternWant{}},
	{"star dot", "*.", patternWant{}},
	{"inner star", "a*.com", patternWant{}},
	{"double wildcard", "*.*.example.com", patternWant{}},
	{"star suffix", "example.*", patternWant{}},
	{"wildcard empty label", "*..example.com", patternWant{}},
	{"wildcard trailing dot", "*.example.com.", patternWant{}},
	{"wildcard ip base", "*.1.2.3.4", patternWant{}},
	{"wildcard numeric base", "*.example.42", patternWant{}},
	{"star no dot", "*example.com", patternWant{}},
	// IPv4.
	{"ipv4", "1.2.3.4", patternWant{"ip", "1.2.3.4", 0}},
	{"ipv4 port", "127.0.0.1:3000", patternWant{"ip", "127.0.0.1", 3000}},
	{"ipv4 zero", "0.0.0.0", patternWant{"ip", "0.0.0.0", 0}},
	{"ipv4 shorthand", "127.1", patternWant{}},
	{"ipv4 integer", "2130706433", patternWant{}},
	{"ipv4 hex", "0x7f.0.0.1", patternWant{}},
	{"ipv4 leading zero", "1.2.3.04", patternWant{}},
	{"ipv4 five parts", "1.2.3.4.5", patternWant{}},
	{"ipv4 octet overflow", "256.1.1.1", patternWant{}},
	{"ipv4 bracketed", "[1.2.3.4]", patternWant{}},
	// IPv6.
	{"ipv6 loopback", "[::1]", patternWant{"ip", "::1", 0}},
	{"ipv6 port", "[2001:db8::1]:443", patternWant{"ip", "2001:db8::1", 443}},
	{"ipv6 compressed", "[2001:0db8:0000:0000:0000:0000:0000:0001]", patternWant{"ip", "2001:db8::1", 0}},
	{"ipv6 uppercase", "[2001:DB8::A]", patternWant{"ip", "2001:db8::a", 0}},
	{"ipv6 mapped", "[::ffff:1.2.3.4]", patternWant{"ip", "1.2.3.4", 0}},
	{"ipv6 mapped hex", "[::ffff:102:304]:80", patternWant{"ip", "1.2.3.4", 80}},
	{"ipv6 compatible kept", "[::1.2.3.4]", patternWant{"ip", "::102:304", 0}},
	{"ipv6 zone dropped", "[fe80::1%eth0]", patternWant{"ip", "fe80::1", 0}},
	{"ipv6 zone port", "[fe80::1%25en0]:22", patternWant{"ip", "fe80::1", 22}},
	{"ipv6 unbracketed", "::1", patternWant{}},
	{"ipv6 unbracketed ambiguous", "2001:db8::1:443", patternWant{}},
	{"ipv6 unclosed", "[::1", patternWant{}},
	{"ipv6 junk after", "[::1]junk", patternWant{}},
	{"ipv6 port 0", "[::1]:0", patternWant{}},
	{"ipv6 empty port", "[::1]:", patternWant{}},
	{"ipv6 empty", "[]", patternWant{}},
	{"ipv6 name inside", "[example.com]", patternWant{}},
	{"ipv6 bad", "[1:2:3:4:5:6:7:8:9]", patternWant{}},
	{"ipv6 double bracket", "[[::1]]", patternWant{}},
}

func TestParseAllowPattern(t *testing.T) {
	for _, tc := range allowCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAllowPattern(tc.in)
			checkPattern(t, tc.in, p, err, tc.want, false)
		})
	}
}

var denyOnlyCases = []struct {
	name string
	in   string
	want patternWant
}{
	{"deny all", "*", patternWant{"all", "*", 0}},
	{"deny all port", "*:22", patternWant{"all", "*", 22}},
	{"deny all port 65535", "*:65535", patternWant{"all", "*", 65535}},
	{"deny all port 0", "*:0", patternWant{}},
	{"deny all port 65536", "*:65536", patternWant{}},
	{"deny all leading zero", "*:022", patternWant{}},
	{"deny star dot", "*.", patternWant{}},
	{"deny tld wildcard", "*.com", patternWant{}},
	{"deny double star", "**", patternWant{}},
	{"deny star colon", "*:", patternWant{}},
}

func TestParseDenyPattern(t *testing.T) {
	// Every allow-list verdict holds for the deny list too.
	for _, tc := range allowCases {
		t.Run("allow grammar/"+tc.name, func(t *testing.T) {
			p, err := ParseDenyPattern(tc.in)
			want := tc.want
			if tc.in == "*" || tc.in == "*:443" {
				want = patternWant{"all", "*", map[string]int{"*": 0, "*:443": 443}[tc.in]}
			}
			checkPattern(t, tc.in, p, err, want, true)
		})
	}
	for _, tc := range denyOnlyCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseDenyPattern(tc.in)
			checkPattern(t, tc.in, p, err, tc.want, true)
		})
	}
}

func checkPattern(t *testing.T, in string, p Pattern, err error, want patternWant, deny bool) {
	t.Helper()
	if want.kind == "" {
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Fatalf("parse(%q) = %v, %v; want *PatternError", in, p, err)
		}
		if pe.Entry != in || pe.Deny != deny {
			t.Errorf("PatternError = %+v", pe)
		}
		if p != (Pattern{}) {
			t.Errorf("failed parse returned non-zero pattern %+v", p)
		}
		return
	}
	if err != nil {
		t.Fatalf("parse(%q) error %v; want %+v", in, err, want)
	}
	got := patternWant{describeKind(p), p.Host(), p.Port()}
	if got != want {
		t.Errorf("parse(%q) = %+v; want %+v", in, got, want)
	}
	if p.String() != in {
		t.Errorf("String() = %q; want %q", p.String(), in)
	}
	if p.IsIP() != p.IP().IsValid() {
		t.Errorf("IsIP %v but IP %v", p.IsIP(), p.IP())
	}
	if p.IsIP() && (p.IP().String() != p.Host() || p.IP().Is4In6() || p.IP().Zone() != "") {
		t.Errorf("IP %v not canonical (host %q)", p.IP(), p.Host())
	}
}

// TestPatternErrorMessages: a refused entry's message says which rule it
// broke and what to write instead (issue 14, item 7: every entry got the
// same 350-character text); where the reference refuses the entry too, its
// message follows, and where the reference accepts it (srt is stricter),
// it does not. Every suggested spelling parses.
func TestPatternErrorMessages(t *testing.T) {
	cases := []struct {
		deny      bool
		entry     string
		rule      string // the message after the quoted entry, before the reference's
		suggested string // an entry the rule tells to write; "" for none
		beyond    bool   // the reference accepts it
	}{
		{entry: "", rule: ruleEmpty},
		{entry: "https://example.com/x", rule: `has a scheme: write the host alone ("example.com")`, suggested: "example.com"},
		{entry: "example.com/path", rule: `has a path ("/path"): write the host alone ("example.com")`, suggested: "example.com"},
		{entry: "10.0.0.0/8", rule: ruleRangeAllow},
		{entry: "10.0.0.0/8", deny: true, rule: ruleRangeDeny},
		{entry: "2001:db8::1:443", rule: ruleColons},
		{entry: "[::1", rule: ruleNoClose},
		{entry: "[::1]x", rule: `has "x" after "]": only ":" and a port may follow the brackets`},
		{entry: "[1.2.3.4]:80", rule: `has an IPv4 address in brackets, which hold IPv6 addresses only: write "1.2.3.4:80"`, suggested: "1.2.3.4:80", beyond: true},
		{entry: "[example.com]", rule: `has "example.com" in brackets, which is not an IPv6 address: brackets hold IPv6 addresses only`, beyond: true},
		{entry: "example.com:", rule: rulePortEmpty},
		{entry: "evil.com:443.allowed.com", rule: `has ":443.allowed.com" after ":", which is not a port: a port is a number from 1 to 65535`},
		{entry: "example.com:0", rule: rulePortZero},
		{entry: "*:0", deny: true, rule: rulePortZero},
		{entry: "example.com:080", rule: `has port "080" with a leading zero: write "80"`},
		{entry: "example.com:65536", rule: `has port 65536: a port is 1-65535`},
		{entry: ":443", rule: ruleNoHost},
		{entry: "*", rule: ruleStar},
		{entry: "bücher.de", rule: `has non-ASCII characters: write the name in its ASCII form, "xn--…" (as "idn2 bücher.de" prints it)`, beyond: true},
		{entry: "exa mple.com", rule: `contains " ", which no host name has: a name is letters, digits, "-", "_" and dots`, beyond: true},
		{entry: "example.com.:443", rule: `ends in ".": write it without the trailing dot ("example.com:443"); it matches the host written either way`, suggested: "example.com:443"},
		{entry: "*.", rule: ruleStar},
		{entry: ".example.com", rule: `starts with ".": write "example.com" for the domain itself and "*.example.com" for its subdomains`, suggested: "*.example.com"},
		{entry: "a*.example.com", rule: ruleStarPlace},
		{entry: "*.com", rule: ruleTooBroad},
		{entry: "a..b.com", rule: ruleEmptyLabel, beyond: true},
		{entry: strings.Repeat("a", 250) + ".example.com", rule: ruleTooLong, beyond: true},
		{entry: "intranet", rule: ruleOneLabel},
		{entry: "127.1", rule: `is the IPv4 address 127.0.0.1 in shorthand (a name whose last label is a number is read as an address): write "127.0.0.1"`, suggested: "127.0.0.1", beyond: true},
		{entry: "0x7f.0.0.1:8080", rule: `is the IPv4 address 127.0.0.1 in shorthand (a name whose last label is a number is read as an address): write "127.0.0.1:8080"`, suggested: "127.0.0.1:8080", beyond: true},
		{entry: "example.123", rule: `ends in a numeric label ("123"): such a host is read as an IPv4 address, and this one is not a valid address, so no destination can match it`, beyond: true},
	}
	for _, tc := range cases {
		parse, ref := ParseAllowPattern, InvalidPatternMessage
		if tc.deny {
			parse, ref = ParseDenyPattern, InvalidDenyPatternMessage
		}
		_, err := parse(tc.entry)
		var pe *PatternError
		if !errors.As(err, &pe) {
			t.Fatalf("parse(%q) = %v; want a *PatternError", tc.entry, err)
		}
		want := quoteEntry(tc.entry) + " " + tc.rule
		if !tc.beyond {
			want += ". " + ref
		}
		if err.Error() != want {
			t.Errorf("parse(%q):\n got %s\nwant %s", tc.entry, err, want)
		}
		if tc.suggested != "" {
			if _, err := parse(tc.suggested); err != nil {
				t.Errorf("the suggestion %q for %q does not parse: %v", tc.suggested, tc.entry, err)
			}
		}
	}
	if !strings.HasSuffix(InvalidPatternMessage, `An optional ":port" suffix (1-65535) restricts the entry to that port.`) {
		t.Error("allow message lost its port sentence")
	}
}

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		name    string
		pattern string
		deny    bool
		host    string
		port    int
		want    bool
	}{
		{"exact", "example.com", false, "example.com", 443, true},
		{"exact other", "example.com", false, "example.org", 443, false},
		{"exact not subdomain", "example.com", false, "a.example.com", 443, false},
		{"exact not suffix", "example.com", false, "badexample.com", 443, false},
		{"exact host case", "example.com", false, "EXAMPLE.com", 443, true},
		{"exact entry case", "EXAMPLE.com", false, "example.com", 443, true},
		{"exact no unicode folding", "kexample.com", false, "\u212aexample.com", 443, false},
		{"exact any port", "example.com", false, "example.com", 1, true},
		{"exact port match", "example.com:443", false, "example.com", 443, true},
		{"exact port mismatch", "example.com:443", false, "example.com", 80, false},
		{"exact port 0 dest", "example.com:443", false, "example.com", 0, false},
		{"wildcard sub", "*.example.com", false, "a.example.com", 80, true},
		{"wildcard deep sub", "*.example.com", false, "a.b.example.com", 80, true},
		{"wildcard not apex", "*.example.com", false, "example.com", 80, false},
		{"wildcard not suffix", "*.example.com", false, "aexample.com", 80, false},
		{"wildcard not dot only", "*.example.com", false, ".example.com", 80, false},
		{"wildcard case", "*.example.com", false, "A.EXAMPLE.COM", 80, true},
		{"wildcard port", "*.example.com:8443", false, "a.example.com", 8443, true},
		{"wildcard port mismatch", "*.example.com:8443", false, "a.example.com", 443, false},
		{"wildcard never ipv4", "*.0.1", false, "127.0.0.1", 80, false},
		{"wildcard never ipv6", "*.example.com", false, "::1", 80, false},
		{"wildcard never bracketed", "*.example.com", false, "[::1]", 80, false},
		{"localhost", "localhost", false, "localhost", 8080, true},
		{"localhost not sub", "localhost", false, "a.localhost", 8080, false},
		{"ipv4", "1.2.3.4", false, "1.2.3.4", 443, true},
		{"ipv4 other", "1.2.3.4", false, "1.2.3.5", 443, false},
		{"ipv4 port", "127.0.0.1:3000", false, "127.0.0.1", 3000, true},
		{"ipv4 port mismatch", "127.0.0.1:3000", false, "127.0.0.1", 3001, false},
		{"ipv4 mapped host", "1.2.3.4", false, "::ffff:1.2.3.4", 443, true},
		{"ipv4 not name", "1.2.3.4", false, "1.2.3.4.example.com", 443, false},
		{"ipv6", "[::1]", false, "::1", 80, true},
		{"ipv6 expanded host", "[::1]", false, "0:0:0:0:0:0:0:1", 80, true},
		{"ipv6 port", "[2001:db8::1]:443", false, "2001:db8::1", 443, true},
		{"ipv6 port mismatch", "[2001:db8::1]:443", false, "2001:db8::1", 80, false},
		{"ipv6 mapped entry", "[::ffff:1.2.3.4]", false, "1.2.3.4", 80, true},
		{"ipv6 zone entry", "[fe80::1%eth0]", false, "fe80::1", 80, true},
		{"ipv6 not v4 compat", "[::1.2.3.4]", false, "1.2.3.4", 80, false},
		{"deny all", "*", true, "anything.example", 1, true},
		{"deny all ip", "*", true, "10.0.0.1", 1, true},
		{"deny all port", "*:22", true, "github.com", 22, true},
		{"deny all port other", "*:22", true, "github.com", 443, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parse := ParseAllowPattern
			if tc.deny {
				parse = ParseDenyPattern
			}
			p, err := parse(tc.pattern)
			if err != nil {
				if tc.name == "wildcard never ipv4" {
					// "*.0.1" is refused outright; build the wildcard by hand
					// to prove Match refuses IPs on its own.
					p = Pattern{text: tc.pattern, kind: kindWildcard, host: "0.1"}
				} else {
					t.Fatalf("parse(%q): %v", tc.pattern, err)
				}
			}
			if got := p.Match(tc.host, tc.port); got != tc.want {
				t.Errorf("%q.Match(%q, %d) = %v; want %v", tc.pattern, tc.host, tc.port, got, tc.want)
			}
		})
	}
}

func TestZeroPatternMatchesNothing(t *testing.T) {
	var p Pattern
	for _, h := range []string{"", "example.com", "1.2.3.4", "*"} {
		if p.Match(h, 443) {
			t.Errorf("zero Pattern matched %q", h)
		}
	}
	if p.IP() != (netip.Addr{}) || p.IsIP() || p.IsWildcard() || p.DenyAll() {
		t.Error("zero Pattern claims a kind")
	}
}
