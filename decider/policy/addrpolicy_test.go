package policy

import (
	"bufio"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// vectorPolicies are the policies testdata/resolved_addresses.txt names.
func vectorPolicies(t testing.TB) map[string]*AddressPolicy {
	t.Helper()
	l := mustLists(t,
		[]string{"127.0.0.1:8765", "[::1]", "10.1.2.3", "169.254.169.254:80", "192.0.2.10", "93.184.216.34", "example.com"},
		[]string{"93.184.216.34", "[2001:db8::bad]:443", "1.1.1.1:53", "8.8.8.8", "*.example.com"},
		nil, false)
	return map[string]*AddressPolicy{
		"builtin":   nil,
		"proxyonly": {DeniedRanges: ProxyOnlyDefaultDeniedRanges},
		"lists": {
			Allowed:      l.Allowed,
			Denied:       l.Denied,
			DeniedRanges: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			HostAddrs: []netip.Addr{
				netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.11"),
				netip.MustParseAddr("2001:db8::10"), netip.MustParseAddr("fe80::1%eth0"),
			},
		},
	}
}

type addrVector struct {
	line   int
	policy string
	host   string
	port   int
	addr   netip.Addr
	want   AddrClass // "" = ok
}

func (v addrVector) name() string {
	a := "-"
	if v.addr.IsValid() {
		a = v.addr.String()
	}
	return strconv.Itoa(v.line) + "/" + v.policy + "/" + v.host + ":" + strconv.Itoa(v.port) + "/" + a
}

func readAddrVectors(t testing.TB) []addrVector {
	t.Helper()
	f, err := os.Open("testdata/resolved_addresses.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []addrVector
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 5 {
			t.Fatalf("line %d: too few fields: %q", n, line)
		}
		port, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("line %d: port: %v", n, err)
		}
		v := addrVector{line: n, policy: fields[0], host: fields[1], port: port}
		if fields[3] != "-" {
			if v.addr, err = netip.ParseAddr(fields[3]); err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
		}
		if verdict := strings.Join(fields[4:], " "); verdict != "ok" {
			v.want = AddrClass(verdict)
			if !slices.Contains(classOrder, v.want) {
				t.Fatalf("line %d: unknown class %q", n, verdict)
			}
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestCheckVectors(t *testing.T) {
	policies := vectorPolicies(t)
	vs := readAddrVectors(t)
	if len(vs) < 100 {
		t.Fatalf("only %d vectors", len(vs))
	}
	for _, v := range vs {
		t.Run(v.name(), func(t *testing.T) {
			p, ok := policies[v.policy]
			if !ok {
				t.Fatalf("unknown policy %q", v.policy)
			}
			gotOK, got := p.Check(v.host, v.port, v.addr)
			if gotOK != (v.want == "") || got != v.want {
				t.Errorf("Check(%s, %d, %v) = %v, %q; want %q", v.host, v.port, v.addr, gotOK, got, v.want)
			}
		})
	}
}

func TestFilterAddrs(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	proxyOnly := &AddressPolicy{DeniedRanges: ProxyOnlyDefaultDeniedRanges}
	cases := []struct {
		name   string
		p      *AddressPolicy
		host   string
		in     []netip.Addr
		kept   []netip.Addr
		reason string
	}{
		{"all kept in order", nil, "example.com", addrs("8.8.8.8", "2001:4860::1", "1.1.1.1"),
			addrs("8.8.8.8", "2001:4860::1", "1.1.1.1"), ""},
		{"survivors kept", nil, "example.com", addrs("127.0.0.1", "8.8.8.8", "169.254.1.1", "1.1.1.1"),
			addrs("8.8.8.8", "1.1.1.1"), ""},
		{"single class", nil, "myapp.test", addrs("127.0.0.1"), nil, "resolved to a loopback address"},
		{"classes in priority order", nil, "example.com", addrs("169.254.1.1", "127.0.0.1", "::1", "fe80::1"),
			nil, "resolved to a loopback address / a link-local address"},
		{"listed after built-in", proxyOnly, "example.com", addrs("10.0.0.1", "224.0.0.1", "0.0.0.0"),
			nil, "resolved to an unspecified address / a multicast address / a listed address"},
		{"unparsable last", nil, "example.com", []netip.Addr{{}, netip.MustParseAddr("127.0.0.1")},
			nil, "resolved to a loopback address / an unparsable address"},
		{"non-loopback", nil, "localhost", addrs("8.8.8.8", "10.0.0.1"), nil, "resolved to a non-loopback address"},
		{"no addresses no reason", nil, "example.com", nil, nil, ""},
		{"ip literal host kept", nil, "127.0.0.1", addrs("127.0.0.1"), addrs("127.0.0.1"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept, reason := tc.p.FilterAddrs(tc.host, 443, tc.in)
			if !slices.Equal(kept, tc.kept) || reason != tc.reason {
				t.Errorf("FilterAddrs = %v, %q; want %v, %q", kept, reason, tc.kept, tc.reason)
			}
		})
	}
	// The reason does not depend on the resolver's order.
	a := addrs("fe80::1", "127.0.0.1", "224.0.0.1", "255.255.255.255")
	_, want := (*AddressPolicy)(nil).FilterAddrs("x.example", 80, a)
	slices.Reverse(a)
	if _, got := (*AddressPolicy)(nil).FilterAddrs("x.example", 80, a); got != want {
		t.Errorf("order-dependent reason: %q vs %q", got, want)
	}
}

func TestClassOrderCoversTable(t *testing.T) {
	last := -1
	for _, row := range builtinDenied {
		i := slices.Index(classOrder, row.class)
		if i < last {
			t.Errorf("table row %v (%s) is out of priority order", row.prefix, row.class)
		}
		last = i
		if row.prefix != row.prefix.Masked() {
			t.Errorf("table row %v is not masked", row.prefix)
		}
	}
	if len(classOrder) != 11 {
		t.Errorf("%d classes", len(classOrder))
	}
}
