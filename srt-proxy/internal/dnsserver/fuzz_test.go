package dnsserver

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
)

// Any bytes in: no panic, and an answer, when there is one, parses
// strictly (helpers_test.go's reader), answers the query's id, is a
// response, fits the UDP limits, and carries only addresses of the fake
// ranges or loopback: nothing from anywhere else.
func FuzzAnswer(f *testing.F) {
	f.Add(query(1, "example.com", layers.DNSTypeA, 0), true)
	f.Add(query(2, "Example.com", layers.DNSTypeAAAA, 1232), false)
	f.Add(query(3, "localhost", layers.DNSTypeA, 0), true)
	f.Add(query(4, "example.com", layers.DNSTypeTXT, 512), true)
	f.Add(query(5, "", layers.DNSTypeNS, 0), true)
	f.Add(raw(6, 0, [4]uint16{1}, 0xc0, 12, 0, 1, 0, 1), true)
	f.Add(raw(7, 0, [4]uint16{1}, 1, 'a', 0, 0), false)
	f.Add(raw(8, 0, [4]uint16{1, 0, 0, 1}, 1, 'a', 0, 0, 1, 0, 1, 0, 0, 41, 4, 0xd0, 1, 0, 0, 0, 0, 0, 4, 0, 8, 0, 0), true)
	a := &Answerer{Table: &fakeip.Table{Size: 64}}
	f.Fuzz(func(t *testing.T, q []byte, udp bool) {
		b := a.Answer(q, udp)
		if b == nil {
			if len(q) >= 12 && q[2]&0x80 == 0 {
				t.Fatalf("no answer to a query % x", q)
			}
			return
		}
		r, err := parse(b)
		if err != nil {
			t.Fatalf("answer % x to % x: %v", b, q, err)
		}
		if r.id != binary.BigEndian.Uint16(q) || !r.qr {
			t.Fatalf("answer %+v to % x", r, q)
		}
		if udp && len(b) > udpMax || udp && r.opts == 0 && len(b) > udpClassic {
			t.Fatalf("UDP answer of %d bytes (%d OPT records)", len(b), r.opts)
		}
		if len(r.questions) > 1 || len(r.answers) > 1 || r.authorities > 0 || r.additions > 0 || r.opts > 1 {
			t.Fatalf("answer %+v", r)
		}
		for _, an := range r.answers {
			var addr netip.Addr
			for i := len(an) - 1; i >= 0; i-- {
				if an[i] == ' ' {
					addr = netip.MustParseAddr(an[i+1:])
					break
				}
			}
			if !fakeip.IsFake(addr) && !addr.IsLoopback() {
				t.Fatalf("answer %q to % x", an, q)
			}
		}
	})
}
