package policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/hostname"
)

func FuzzParseAllowPattern(f *testing.F) {
	for _, tc := range allowCases {
		f.Add(tc.in)
	}
	for _, tc := range denyOnlyCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, deny := range []bool{false, true} {
			parse := ParseAllowPattern
			if deny {
				parse = ParseDenyPattern
			}
			p, err := parse(s)
			if err != nil {
				var pe *PatternError
				if !errors.As(err, &pe) || pe.Entry != s || pe.Deny != deny || p != (Pattern{}) {
					t.Fatalf("parse(%q): %#v, %v", s, p, err)
				}
				// Every refusal names the rule the entry broke.
				if pe.Rule == "" {
					t.Fatalf("parse(%q): no rule in %q", s, err)
				}
				continue
			}
			checkParsedPattern(t, s, p, parse)
			if h, err := ParseHostPattern(s); !deny && (err == nil) != (p.Port() == 0) {
				t.Fatalf("host-only parse of %q: %#v, %v", s, h, err)
			} else if err != nil && err.(*PatternError).Rule == "" {
				t.Fatalf("host-only parse of %q: no rule in %q", s, err)
			}
			if !deny {
				if d, err := ParseDenyPattern(s); err != nil || d != p {
					t.Fatalf("allow entry %q parses differently as a deny entry: %#v, %v", s, d, err)
				}
			}
		}
	})
}

func checkParsedPattern(t *testing.T, s string, p Pattern, parse func(string) (Pattern, error)) {
	t.Helper()
	if p.String() != s {
		t.Fatalf("String() = %q; want %q", p.String(), s)
	}
	if again, err := parse(p.String()); err != nil || again != p {
		t.Fatalf("round trip of %q: %#v, %v", s, again, err)
	}
	if p.Port() < 0 || p.Port() > 65535 {
		t.Fatalf("port %d", p.Port())
	}
	port := p.Port()
	if port == 0 {
		port = 443
	}
	switch {
	case p.DenyAll():
		if p.Host() != "*" || !p.Match("example.com", port) {
			t.Fatalf("deny-all %q", s)
		}
	case p.IsIP():
		a := p.IP()
		if !a.IsValid() || a.Is4In6() || a.Zone() != "" || a.String() != p.Host() {
			t.Fatalf("IP entry %q: %v / %q", s, a, p.Host())
		}
		if !p.Match(p.Host(), port) {
			t.Fatalf("%q does not match its own address", s)
		}
	case p.IsWildcard():
		// A wildcard covers some canonical host, and never its own base.
		sub := "a." + p.Host()
		if c, err := hostname.Canonical(sub); err != nil || c != sub || !p.Match(sub, port) || p.Match(p.Host(), port) {
			t.Fatalf("wildcard %q: canonical %q, %v", s, c, err)
		}
	default:
		// A name entry is a canonical host, so some destination matches it.
		if c, err := hostname.Canonical(p.Host()); err != nil || c != p.Host() || !p.Match(p.Host(), port) {
			t.Fatalf("name %q: canonical %q, %v", s, c, err)
		}
		if p.Host() != "localhost" && !strings.Contains(p.Host(), ".") {
			t.Fatalf("dotless name %q accepted", s)
		}
	}
	if p.Port() != 0 && p.Match(p.Host(), p.Port()%65535+1) && !p.IsWildcard() {
		t.Fatalf("%q matched another port", s)
	}
}

// FuzzCanonicalHost fuzzes hostname.Canonical here, beside the pattern
// grammar: every name it returns must be one the grammar's validName
// accepts, so that a canonical host can always be matched.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "EXAMPLE.com.", "127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.1",
		"[::1]", "::ffff:1.2.3.4", "[fe80::1%eth0]", "1.2.3.4.5", "a..b", ".", "", "[1.2.3.4]",
		"evil.com\x00.allowed.com", "xn--r8jz45g.jp", "4294967296", "1.2.65535", "0x.0x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := hostname.Canonical(s)
		if err != nil {
			if !errors.Is(err, hostname.ErrMalformed) || c != "" {
				t.Fatalf("hostname.Canonical(%q) = %q, %v", s, c, err)
			}
			return
		}
		if again, err := hostname.Canonical(c); err != nil || again != c {
			t.Fatalf("not idempotent: %q → %q → %q, %v", s, c, again, err)
		}
		if c == "" || len(c) > hostname.MaxLen || c != hostname.LowerASCII(c) || strings.HasSuffix(c, ".") {
			t.Fatalf("hostname.Canonical(%q) = %q", s, c)
		}
		if a, err := netip.ParseAddr(c); err == nil {
			if a.String() != c || a.Is4In6() || a.Zone() != "" {
				t.Fatalf("IP host %q not printed canonically (%v)", c, a)
			}
		} else if !validName(c, hostname.MaxLen) {
			t.Fatalf("name host %q is not a valid name", c)
		}
		if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil && a.Zone() == "" {
			if a.Unmap().String() != c {
				t.Fatalf("IP %q canonicalised to %q", s, c)
			}
		}
		authority := c + ":443"
		if strings.Contains(c, ":") {
			authority = "[" + c + "]:443"
		}
		if h, port, err := hostname.SplitHostPort(authority); err != nil || h != c || port != 443 {
			t.Fatalf("SplitHostPort(%q) = %q, %d, %v", authority, h, port, err)
		}
	})
}

func FuzzDecide(f *testing.F) {
	f.Add("*.example.org", "evil.example.org", "a.example.org", uint16(443), false)
	f.Add("127.0.0.1:8765", "*:22", "127.1", uint16(8765), true)
	f.Add("[::1]", "*", "[::ffff:7f00:1]", uint16(80), false)
	f.Add("localhost", "169.254.169.254", "2852039166", uint16(80), false)
	f.Fuzz(func(t *testing.T, allow, deny, host string, port uint16, strict bool) {
		allowed := []string{"example.com", "*.github.com:443", "1.2.3.4", "[2001:db8::1]"}
		denied := []string{"bad.github.com", "[::1]:22"}
		if _, err := ParseAllowPattern(allow); err == nil {
			allowed = append(allowed, allow)
		}
		if _, err := ParseDenyPattern(deny); err == nil {
			denied = append(denied, deny)
		}
		l := mustLists(t, allowed, denied, map[string]string{deny: "fuzz reason"}, strict)
		p := int(port)
		d := l.Decide(host, p)
		if again := l.Decide(host, p); again != d {
			t.Fatalf("not deterministic: %+v vs %+v", d, again)
		}
		if d.Reason == "" {
			t.Fatalf("no reason: %+v", d)
		}
		c, err := hostname.Canonical(host)
		if (err != nil) != (d.Step == StepMalformed) || d.Host != c {
			t.Fatalf("malformed mismatch: %+v, %q, %v", d, c, err)
		}
		if err == nil {
			if dc := l.Decide(c, p); dc != d {
				t.Fatalf("canonical host decides differently: %+v vs %+v", dc, d)
			}
		}
		denyMatch := matchingEntry(l.Denied, c, p)
		allowMatch := matchingEntry(l.Allowed, c, p)
		switch d.Step {
		case StepDenyList:
			if d.Allow || denyMatch == "" || d.Rule != denyMatch {
				t.Fatalf("deny %+v, first deny match %q", d, denyMatch)
			}
		case StepAllowList:
			if !d.Allow || denyMatch != "" || d.Rule != allowMatch {
				t.Fatalf("allow %+v, deny match %q, allow match %q", d, denyMatch, allowMatch)
			}
		case StepStrict, StepUndecided:
			if d.Allow || denyMatch != "" || allowMatch != "" || (d.Step == StepStrict) != strict {
				t.Fatalf("undecided %+v", d)
			}
		case StepMalformed:
			if d.Allow || d.Rule != "" {
				t.Fatalf("malformed %+v", d)
			}
		default:
			t.Fatalf("step %v", d.Step)
		}
		all := mustLists(t, allowed, append(denied, "*"), nil, strict)
		if all.Decide(host, p).Allow {
			t.Fatalf("allowed past a deny-all entry: %q", host)
		}
	})
}

func matchingEntry(list []Pattern, host string, port int) string {
	for _, p := range list {
		if p.Match(host, port) {
			return p.String()
		}
	}
	return ""
}

func FuzzParseAddressRange(f *testing.F) {
	for _, s := range []string{
		"10.0.0.0/8", "192.168.1.10", "fc00::/7", "::ffff:10.0.0.0/104", "::ffff:1.2.3.4/95",
		"fe80::%eth0/10", "1.2.3.4%x", "[::1]", "1.2.3.4/008", "::/0", "10.1.2.3/8",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseAddressRange(s)
		if err != nil {
			var re *AddressRangeError
			if !errors.As(err, &re) || re.Entry != s || err.Error() != InvalidAddressRangeMessage {
				t.Fatalf("ParseAddressRange(%q): %v", s, err)
			}
			return
		}
		a := p.Addr()
		if !p.IsValid() || p != p.Masked() || a.Is4In6() || a.Zone() != "" {
			t.Fatalf("ParseAddressRange(%q) = %v", s, p)
		}
		if again, err := ParseAddressRange(p.String()); err != nil || again != p {
			t.Fatalf("round trip %q → %v → %v, %v", s, p, again, err)
		}
	})
}

func FuzzCheckAddr(f *testing.F) {
	policies := vectorPolicies(f)
	for _, v := range readAddrVectors(f) {
		if v.addr.IsValid() {
			f.Add(v.addr.AsSlice(), v.host, uint16(v.port))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, host string, port uint16) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		p := int(port)
		_, hostIsIP := hostAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		for name, pol := range policies {
			ok, class := pol.Check(host, p, a)
			if ok != (class == "") {
				t.Fatalf("%s: Check = %v, %q", name, ok, class)
			}
			if hostIsIP && !ok {
				t.Fatalf("%s: IP-literal host %q judged: %q", name, host, class)
			}
			kept, reason := pol.FilterAddrs(host, p, []netip.Addr{a})
			if (len(kept) == 1) != ok || (reason == "") != ok || (!ok && reason != "resolved to "+string(class)) {
				t.Fatalf("%s: FilterAddrs = %v, %q; Check = %v, %q", name, kept, reason, ok, class)
			}
		}
		if hostIsIP {
			return
		}
		// Without lists, an address in (or carrying an address in) a built-in
		// range is never accepted, and nothing else is refused, except by the
		// localhost rule.
		u := a.Unmap()
		v4, hasV4 := embeddedIPv4(u)
		builtin := builtinClass(u)
		if builtin == "" && hasV4 {
			builtin = builtinClass(v4)
		}
		ok, class := (*AddressPolicy)(nil).Check(host, p, a)
		if isLoopbackName(host) {
			if ok != isLoopback(u) {
				t.Fatalf("localhost %q: %v → %v, %q", host, a, ok, class)
			}
		} else if ok != (builtin == "") || class != builtin {
			t.Fatalf("%v: Check = %v, %q; built-in class %q", a, ok, class, builtin)
		}
		// A deny-listed literal, or a denied range holding the address,
		// always refuses.
		lit := "[" + u.String() + "]"
		if u.Is4() {
			lit = u.String()
		}
		dp, err := ParseDenyPattern(lit)
		if err != nil {
			t.Fatalf("deny literal %q: %v", lit, err)
		}
		ap, _ := ParseAllowPattern(lit)
		if ok, class := (&AddressPolicy{Denied: []Pattern{dp}, Allowed: []Pattern{ap}}).Check(host, p, a); ok || class != ClassDenyListed {
			t.Fatalf("deny-listed %v: %v, %q", a, ok, class)
		}
		if ok, _ := (&AddressPolicy{Allowed: []Pattern{ap}}).Check(host, p, a); !ok {
			t.Fatalf("allow-listed %v refused", a)
		}
		if !isLoopbackName(host) {
			r := netip.PrefixFrom(u, u.BitLen())
			if ok, _ := (&AddressPolicy{DeniedRanges: []netip.Prefix{r}}).Check(host, p, a); ok {
				t.Fatalf("address %v in a denied range accepted", a)
			}
			if ok, _ := (&AddressPolicy{HostAddrs: []netip.Addr{a}}).Check(host, p, a); ok {
				t.Fatalf("host address %v accepted", a)
			}
		}
	})
}

// FuzzEgressEntry: an entry the hello can carry (EgressEntry) is one of the
// hello's grammar, spelt the same way again, and it matches what the
// settings entry matches; one it cannot carry is deny-all or a name outside
// the hello's labels.
func FuzzEgressEntry(f *testing.F) {
	for _, tc := range allowCases {
		f.Add(tc.in, "a.example.com", uint16(443))
	}
	f.Add("*.Example.org:8443", "x.example.org", uint16(8443))
	f.Add("[::ffff:7f00:1]", "127.0.0.1", uint16(80))
	f.Add("my_host.example", "my_host.example", uint16(80))
	f.Fuzz(func(t *testing.T, s, host string, port uint16) {
		p, err := ParseDenyPattern(s)
		if err != nil {
			return
		}
		entry, ok := p.EgressEntry()
		if !ok {
			if entry != "" {
				t.Fatalf("%q: not carried, yet %q", s, entry)
			}
			if !p.DenyAll() && (p.IsIP() || ValidEgressEntry(p.Host()) && !strings.Contains(p.Host(), "_")) {
				t.Fatalf("%q: the hello could carry it, yet EgressEntry refuses", s)
			}
			return
		}
		e, err := ParseEgressPattern(entry)
		if err != nil {
			t.Fatalf("%q → %q, which is not a hello entry: %v", s, entry, err)
		}
		if again, ok := e.EgressEntry(); !ok || again != entry {
			t.Fatalf("%q → %q → %q %v", s, entry, again, ok)
		}
		h, err := hostname.Canonical(host)
		if err != nil {
			return
		}
		for _, port := range []int{int(port), p.Port(), 80} {
			if port > 0 && p.Match(h, port) != e.Match(h, port) {
				t.Fatalf("%q and its hello entry %q differ on %s:%d: %v, %v", s, entry, h, port, p.Match(h, port), e.Match(h, port))
			}
		}
	})
}
