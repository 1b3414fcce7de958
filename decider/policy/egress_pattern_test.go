package policy

import (
	"testing"

	"github.com/srt-sandbox/decider/hostname"
)

func TestParseEgressPattern(t *testing.T) {
	tests := []struct {
		entry string
		match []string // host:port pairs, "host port"
		miss  []string
	}{
		{"vm", []string{"vm 80", "vm 443"}, []string{"a.vm 80", "vmx 80"}},
		{"example.com", []string{"example.com 1"}, []string{"www.example.com 1"}},
		{"example.com:443", []string{"example.com 443"}, []string{"example.com 80"}},
		{"*.example.com", []string{"a.example.com 80", "a.b.example.com 80"}, []string{"example.com 80", "1.2.3.4 80"}},
		{"*.example.com:8443", []string{"a.example.com 8443"}, []string{"a.example.com 443"}},
		{"127.0.0.1", []string{"127.0.0.1 80"}, []string{"127.0.0.2 80"}},
		{"127.0.0.1:8765", []string{"127.0.0.1 8765"}, []string{"127.0.0.1 8766"}},
		{"::1", []string{"::1 80", "::1 443"}, []string{"::2 80"}},
		{"[::1]", []string{"::1 80"}, nil},
		{"[::1]:443", []string{"::1 443"}, []string{"::1 80"}},
		{"::ffff:10.0.0.1", []string{"10.0.0.1 80"}, nil},
	}
	for _, tt := range tests {
		p, err := ParseEgressPattern(tt.entry)
		if err != nil {
			t.Errorf("%q: %v", tt.entry, err)
			continue
		}
		for _, list := range []struct {
			hosts []string
			want  bool
		}{{tt.match, true}, {tt.miss, false}} {
			for _, hp := range list.hosts {
				var host string
				var port int
				for i := len(hp) - 1; i >= 0; i-- {
					if hp[i] == ' ' {
						host = hp[:i]
						for _, c := range hp[i+1:] {
							port = port*10 + int(c-'0')
						}
						break
					}
				}
				if got := p.Match(host, port); got != list.want {
					t.Errorf("%q.Match(%s, %d) = %v", tt.entry, host, port, got)
				}
			}
		}
	}
	for _, bad := range []string{"*", "*.com", "Example.com", "::1:443x", "[::1]:0", "a..b", "1.2.3.4.5", ""} {
		if _, err := ParseEgressPattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	l, errs := EgressLists([]string{"vm", "*.wild.test"}, []string{"bad.wild.test"})
	if errs != nil {
		t.Fatal(errs)
	}
	if !l.Decide("vm", 80).Allow || l.Decide("bad.wild.test", 80).Allow || !l.Decide("ok.wild.test", 80).Allow || l.Decide("other", 80).Allow {
		t.Error("EgressLists decides wrongly")
	}
}

// FuzzParseEgressPattern: an entry is accepted exactly when it is an
// egress entry, and an accepted exact entry matches its own host.
func FuzzParseEgressPattern(f *testing.F) {
	for _, s := range []string{"vm", "a.example:443", "*.example.com", "::1", "[::1]:8", "10.0.0.1:80", "*", "A.b"} {
		f.Add(s, "vm", 80)
	}
	f.Fuzz(func(t *testing.T, entry, host string, port int) {
		p, err := ParseEgressPattern(entry)
		if (err == nil) != ValidEgressEntry(entry) {
			t.Fatalf("%q: parse error %v, but ValidEgressEntry says %v", entry, err, ValidEgressEntry(entry))
		}
		if err != nil {
			return
		}
		if p.String() != entry {
			t.Fatalf("%q: String %q", entry, p.String())
		}
		if !p.IsWildcard() {
			want := p.Port()
			if want == 0 {
				want = 443
			}
			if !p.Match(p.Host(), want) {
				t.Fatalf("%q does not match its own host %q:%d", entry, p.Host(), want)
			}
		}
		if c, err := hostname.Canonical(host); err == nil {
			p.Match(c, port)
		}
	})
}

func TestEgressEntry(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"Example.COM:8443", "example.com:8443"},
		{"*.Example.org", "*.example.org"},
		{"*.example.org:443", "*.example.org:443"},
		{"localhost", "localhost"},
		{"LocalHost:3000", "localhost:3000"},
		{"127.0.0.1", "127.0.0.1"},
		{"10.0.0.1:22", "10.0.0.1:22"},
		{"[::1]", "[::1]"},
		{"[2001:DB8::0:1]:443", "[2001:db8::1]:443"},
		{"[::ffff:10.0.0.1]", "10.0.0.1"},
		{"[fe80::1%eth0]", "[fe80::1]"},
		{"a-b.example", "a-b.example"},
		// The hello cannot carry these.
		{"*", ""},
		{"*:25", ""},
		{"my_host.example.com", ""},
		{"a.1b", ""},
	} {
		p, err := ParseDenyPattern(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		got, ok := p.EgressEntry()
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q %v, want %q", c.in, got, ok, c.want)
		}
	}
}
