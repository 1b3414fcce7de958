package dnsmsg

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
)

func TestQueryBytes(t *testing.T) {
	q, err := Query(0x1234, "a.bc.")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 2, 'b', 'c', 0, 0, 1, 0, 1}
	if !bytes.Equal(q, want) {
		t.Fatalf("Query = % x, want % x", q, want)
	}
}

func TestQueryRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "a..b", strings.Repeat("x", 64) + ".example", strings.Repeat("abcdefg.", 32) + "com"} {
		if _, err := Query(1, name); err == nil {
			t.Errorf("Query(%q) made a message", name)
		}
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	q, err := Query(7, "n1.bench.example.com")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddr("198.18.128.9")
	r, err := Answer(q, addr)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CheckAnswer(r, 7)
	if err != nil || got != addr {
		t.Fatalf("CheckAnswer = %v, %v; want %v", got, err, addr)
	}
	if _, err := CheckAnswer(r, 8); err == nil || !strings.Contains(err.Error(), "id 7, want 8") {
		t.Fatalf("another id: %v", err)
	}
	if _, err := CheckAnswer(q, 7); err == nil || !strings.Contains(err.Error(), "not a response") {
		t.Fatalf("the query itself: %v", err)
	}
	if _, err := Answer(r, addr); err == nil {
		t.Fatal("Answer answered a response")
	}
}

func TestCheckAnswerRefuses(t *testing.T) {
	q, _ := Query(7, "x.example")
	r, _ := Answer(q, netip.MustParseAddr("192.0.2.1"))
	nx := append([]byte(nil), r...)
	nx[3] |= 3 // NXDOMAIN
	noData := append([]byte(nil), r...)
	noData[7] = 0 // no answer record
	aaaa := append([]byte(nil), r...)
	aaaa[len(q)+3] = 28 // the record is an AAAA
	for _, c := range []struct {
		name string
		m    []byte
		want string
	}{
		{"short", r[:11], "too short"},
		{"cut record", r[:len(r)-1], "too short"},
		{"nxdomain", nx, "response code 3"},
		{"no data", noData, "no A record"},
		{"not A", aaaa, "no A record"},
	} {
		if _, err := CheckAnswer(c.m, 7); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzAnswer feeds both readers arbitrary bytes: neither may panic, and
// whatever the responder answers must read back as its address.
func FuzzAnswer(f *testing.F) {
	q, _ := Query(9, "n3.bench.example.com")
	f.Add(q)
	r, _ := Answer(q, netip.MustParseAddr("198.18.128.3"))
	f.Add(r)
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1})
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40})
	addr := netip.MustParseAddr("203.0.113.5")
	f.Fuzz(func(t *testing.T, m []byte) {
		if len(m) >= 2 {
			CheckAnswer(m, uint16(m[0])<<8|uint16(m[1]))
		}
		r, err := Answer(m, addr)
		if err != nil {
			return
		}
		got, err := CheckAnswer(r, uint16(m[0])<<8|uint16(m[1]))
		if err != nil || got != addr {
			t.Fatalf("the answer to % x reads as %v, %v", m, got, err)
		}
	})
}
