package fakeip

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestLookupIsStableAndDistinct(t *testing.T) {
	var tab Table
	a4, a6 := tab.Lookup("example.com")
	b4, b6 := tab.Lookup("example.org")
	if !V4.Contains(a4) || !V6.Contains(a6) || !V4.Contains(b4) || !V6.Contains(b6) {
		t.Fatalf("addresses outside the ranges: %v %v %v %v", a4, a6, b4, b6)
	}
	if a4 == b4 || a6 == b6 {
		t.Fatalf("two names share an address: %v %v / %v %v", a4, a6, b4, b6)
	}
	if c4, c6 := tab.Lookup("example.com"); c4 != a4 || c6 != a6 {
		t.Fatalf("second lookup of example.com: %v %v, first %v %v", c4, c6, a4, a6)
	}
	for _, a := range []netip.Addr{a4, a6} {
		if n, ok := tab.Name(a); !ok || n != "example.com" {
			t.Errorf("Name(%v) = %q, %v; want example.com", a, n, ok)
		}
	}
	// The namespace's own addresses and index 0 are never handed out.
	for _, a := range []string{"198.18.0.1", "fd00:5253::1", "198.18.128.0", "fd00:5253:0:1::"} {
		if n, ok := tab.Name(netip.MustParseAddr(a)); ok {
			t.Errorf("Name(%s) = %q: stands for a name", a, n)
		}
	}
}

func TestNameOfAddressesNeverHandedOut(t *testing.T) {
	var tab Table
	tab.Lookup("a.test")
	for _, a := range []string{"198.18.200.7", "fd00:5253:0:1::7", "fd00:5253:0:1:1::1", "fd00:5253:0:1:ffff:ffff:ffff:ffff", "::ffff:198.18.200.7"} {
		addr := netip.MustParseAddr(a)
		if !IsFake(addr) {
			t.Errorf("IsFake(%s) = false", a)
		}
		if n, ok := tab.Name(addr); ok {
			t.Errorf("Name(%s) = %q, never handed out", a, n)
		}
	}
	for _, a := range []string{"198.18.0.1", "198.19.128.1", "10.0.0.1", "fd00:5253::1", "fd00:5253:0:2::1", "::1"} {
		if IsFake(netip.MustParseAddr(a)) {
			t.Errorf("IsFake(%s) = true", a)
		}
	}
}

func TestMappedIPv4IsTheSameAddress(t *testing.T) {
	var tab Table
	a4, _ := tab.Lookup("x.test")
	if n, ok := tab.Name(netip.AddrFrom16(a4.As16())); !ok || n != "x.test" {
		t.Fatalf("Name of %v as IPv4-mapped IPv6 = %q, %v", a4, n, ok)
	}
}

// The least recently used name goes first, and its address is unknown
// until every other free one was handed out.
func TestEvictionAndReuse(t *testing.T) {
	tab := Table{Size: 3} // a pool of 6 indices: 1..5 handed out
	addr := map[string]netip.Addr{}
	for _, n := range []string{"a", "b", "c"} {
		addr[n], _ = tab.Lookup(n)
	}
	tab.Lookup("a")     // use: c b a → a c b
	tab.Name(addr["c"]) // a use by address counts too: c a b
	tab.Lookup("d")     // evicts b: d c a
	if got := names(&tab); got != "d c a" {
		t.Fatalf("after d: %q, want \"d c a\"", got)
	}
	if n, ok := tab.Name(addr["b"]); ok {
		t.Fatalf("b's address %v stands for %q after b was evicted", addr["b"], n)
	}
	tab.Lookup("e") // evicts a: e d c
	if got := names(&tab); got != "e d c" {
		t.Fatalf("after e: %q, want \"e d c\"", got)
	}
	// Indices 1..5 have all been handed out (a1 b2 c3 d4 e5): the next
	// name takes the one freed first, b's, and a's stays unknown.
	f, _ := tab.Lookup("f")
	if f != addr["b"] {
		t.Fatalf("f = %v, want the address freed first (b's, %v)", f, addr["b"])
	}
	if n, _ := tab.Name(f); n != "f" {
		t.Fatalf("Name(%v) = %q, want f", f, n)
	}
	if n, ok := tab.Name(addr["a"]); ok {
		t.Fatalf("a's address %v stands for %q", addr["a"], n)
	}
}

// names lists the table's names, most recently used first, without using
// them.
func names(t *Table) string {
	s := ""
	for el := t.lru.Front(); el != nil; el = el.Next() {
		if s != "" {
			s += " "
		}
		s += el.Value.(*entry).name
	}
	return s
}

func TestFullTableStaysBounded(t *testing.T) {
	tab := Table{Size: 100}
	seen := map[netip.Addr]bool{}
	for i := range 1000 {
		a, _ := tab.Lookup(fmt.Sprintf("n%d.test", i))
		seen[a] = true
	}
	if tab.lru.Len() != 100 || len(tab.byName) != 100 || len(tab.byIdx) != 100 {
		t.Fatalf("table holds %d/%d/%d entries, size 100", tab.lru.Len(), len(tab.byName), len(tab.byIdx))
	}
	if len(seen) > 199 {
		t.Fatalf("%d distinct addresses handed out; the pool is 199", len(seen))
	}
	for i := 900; i < 1000; i++ {
		a, _ := tab.Lookup(fmt.Sprintf("n%d.test", i))
		if n, _ := tab.Name(a); n != fmt.Sprintf("n%d.test", i) {
			t.Fatalf("recent name n%d.test lost: %v is %q", i, a, n)
		}
	}
}

func TestDefaultPoolCoversTheRange(t *testing.T) {
	var tab Table
	if tab.pool() != 1<<15 || tab.size() != 1<<14 {
		t.Fatalf("pool %d, size %d", tab.pool(), tab.size())
	}
	if got := addrV4(1<<15 - 1); got != netip.MustParseAddr("198.18.255.255") {
		t.Fatalf("last v4 = %v", got)
	}
	if got := addrV6(1<<15 - 1); got != netip.MustParseAddr("fd00:5253:0:1::7fff") {
		t.Fatalf("last v6 = %v", got)
	}
}
