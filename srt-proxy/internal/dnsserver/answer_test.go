package dnsserver

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
)

// raw is a query written by hand: header fields, then the body bytes.
func raw(id uint16, flags uint16, counts [4]uint16, body ...byte) []byte {
	b := make([]byte, 12, 12+len(body))
	binary.BigEndian.PutUint16(b, id)
	binary.BigEndian.PutUint16(b[2:], flags)
	for i, c := range counts {
		binary.BigEndian.PutUint16(b[4+2*i:], c)
	}
	return append(b, body...)
}

const (
	rcNoError  = 0
	rcFormErr  = 1
	rcNXDomain = 3
	rcNotImp   = 4
	rcRefused  = 5
	rcBadVers  = 16
)

func TestAnswer(t *testing.T) {
	long := strings.Repeat(strings.Repeat("a", 61)+".", 4) + "com" // 251 bytes
	for _, c := range []struct {
		name  string
		query []byte
		udp   bool
		want  reply // id 7 and qr assumed; questions and answers as parse lists them
	}{
		{"A", query(7, "example.com", layers.DNSTypeA, 0), true,
			reply{rd: true, ra: true, questions: []string{"example.com 1 1"}, answers: []string{"example.com 1 5 198.18.128.1"}}},
		{"AAAA", query(7, "example.com", layers.DNSTypeAAAA, 0), true,
			reply{rd: true, ra: true, questions: []string{"example.com 28 1"}, answers: []string{"example.com 28 5 fd00:5253:0:1::1"}}},
		{"letter case kept, address shared", query(7, "ExAmple.COM", layers.DNSTypeA, 0), true,
			reply{rd: true, ra: true, questions: []string{"ExAmple.COM 1 1"}, answers: []string{"ExAmple.COM 1 5 198.18.128.1"}}},
		{"localhost", query(7, "localhost", layers.DNSTypeA, 0), true,
			reply{rd: true, ra: true, questions: []string{"localhost 1 1"}, answers: []string{"localhost 1 5 127.0.0.1"}}},
		{"under localhost", query(7, "db.LOCALHOST", layers.DNSTypeAAAA, 0), true,
			reply{rd: true, ra: true, questions: []string{"db.LOCALHOST 28 1"}, answers: []string{"db.LOCALHOST 28 5 ::1"}}},
		{"TXT: no data", query(7, "example.com", layers.DNSTypeTXT, 0), true,
			reply{rd: true, ra: true, questions: []string{"example.com 16 1"}}},
		{"MX: no data", query(7, "example.com", layers.DNSTypeMX, 0), false,
			reply{rd: true, ra: true, questions: []string{"example.com 15 1"}}},
		{"HTTPS: no data", query(7, "example.com", 65, 0), true,
			reply{rd: true, ra: true, questions: []string{"example.com 65 1"}}},
		{"ANY: no data", query(7, "example.com", 255, 0), true,
			reply{rd: true, ra: true, questions: []string{"example.com 255 1"}}},
		{"root NS: no data", query(7, "", layers.DNSTypeNS, 0), true,
			reply{rd: true, ra: true, questions: []string{" 2 1"}}},
		{"an address spelled as a name", query(7, "192.0.2.1", layers.DNSTypeA, 0), true,
			reply{rd: true, ra: true, rcode: rcNXDomain, questions: []string{"192.0.2.1 1 1"}}},
		{"no host name", query(7, "bad name.test", layers.DNSTypeA, 0), true,
			reply{rd: true, ra: true, rcode: rcNXDomain, questions: []string{"bad name.test 1 1"}}},
		{"class CHAOS", func() []byte {
			q := query(7, "version.bind", layers.DNSTypeTXT, 0)
			q[len(q)-1] = 3
			return q
		}(), true, reply{rd: true, ra: true, rcode: rcRefused, questions: []string{"version.bind 16 3"}}},
		{"EDNS", query(7, "example.com", layers.DNSTypeA, 4096), true,
			reply{rd: true, ra: true, questions: []string{"example.com 1 1"}, answers: []string{"example.com 1 5 198.18.128.1"}, opts: 1}},
		{"EDNS version 1", func() []byte {
			q := query(7, "example.com", layers.DNSTypeA, 4096)
			q[len(q)-5] = 1 // the OPT record's TTL: extended rcode, version, flags
			return q
		}(), true, reply{rd: true, ra: true, rcode: rcBadVers, questions: []string{"example.com 1 1"}, opts: 1}},
		{"too large for UDP", query(7, long, layers.DNSTypeAAAA, 0), true,
			reply{rd: true, ra: true, tc: true, questions: []string{long + " 28 1"}}},
		{"the same over TCP", query(7, long, layers.DNSTypeAAAA, 0), false,
			reply{rd: true, ra: true, questions: []string{long + " 28 1"}, answers: []string{long + " 28 5 fd00:5253:0:1::2"}}},
		{"the same with EDNS", query(7, long, layers.DNSTypeAAAA, 1232), true,
			reply{rd: true, ra: true, questions: []string{long + " 28 1"}, answers: []string{long + " 28 5 fd00:5253:0:1::2"}, opts: 1}},
		{"opcode STATUS", raw(7, 2<<11|1<<8, [4]uint16{}), true, reply{rd: true, opcode: 2, rcode: rcNotImp}},
		{"two questions", raw(7, 0, [4]uint16{2}, 1, 'a', 0, 0, 1, 0, 1, 1, 'b', 0, 0, 1, 0, 1), true, reply{rcode: rcFormErr}},
		{"no question", raw(7, 0, [4]uint16{}), true, reply{rcode: rcFormErr}},
		{"an answer in the query", raw(7, 0, [4]uint16{1, 1}, 1, 'a', 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4), true, reply{rcode: rcFormErr}},
		{"an additional record other than OPT", append(query(7, "a", layers.DNSTypeA, 0)[:11], append([]byte{1}, append(query(7, "a", layers.DNSTypeA, 0)[12:], 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4)...)...), true, reply{rd: true, rcode: rcFormErr}},
		{"question cut short after its name", raw(7, 0, [4]uint16{1}, 1, 'a', 0, 0), true, reply{rcode: rcFormErr}},
		{"name cut short", raw(7, 0, [4]uint16{1}, 5, 'a'), true, reply{rcode: rcFormErr}},
		{"empty label inside", raw(7, 0, [4]uint16{1}, 1, 'a', 1, '.', 1, 'b', 0, 0, 1, 0, 1), true, reply{rcode: rcFormErr}},
		{"pointer loop", raw(7, 0, [4]uint16{1}, 0xc0, 12, 0, 1, 0, 1), true, reply{rcode: rcFormErr}},
		{"label type 0x40", raw(7, 0, [4]uint16{1}, 0x41, 'a', 0, 0, 1, 0, 1), true, reply{rcode: rcFormErr}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &Answerer{Table: &fakeip.Table{}}
			a.Table.Lookup("example.com") // index 1
			got := a.Answer(c.query, c.udp)
			r := mustParse(t, got)
			c.want.id, c.want.qr = 7, true
			if !reflect.DeepEqual(*r, c.want) {
				t.Errorf("answer\n %+v\nwant\n %+v", *r, c.want)
			}
		})
	}
}

// Responses and fragments of headers get no answer at all: answering a
// response could start a loop.
func TestAnswerNone(t *testing.T) {
	a := &Answerer{Table: &fakeip.Table{}}
	q := query(7, "example.com", layers.DNSTypeA, 0)
	resp := bytes.Clone(q)
	resp[2] |= 0x80
	for name, b := range map[string][]byte{"empty": nil, "11 bytes": q[:11], "a response": resp} {
		if got := a.Answer(b, true); got != nil {
			t.Errorf("%s: answered % x", name, got)
		}
	}
}

// One name, one pair of addresses, whoever asks; each name its own.
func TestAnswersShareTheTable(t *testing.T) {
	tab := &fakeip.Table{}
	a, b := &Answerer{Table: tab}, &Answerer{Table: tab}
	addr := func(an *Answerer, name string) string {
		r := mustParse(t, an.Answer(query(1, name, layers.DNSTypeA, 0), true))
		if len(r.answers) != 1 {
			t.Fatalf("%s: %+v", name, r)
		}
		return strings.Fields(r.answers[0])[3]
	}
	x1, y, x2 := addr(a, "x.test"), addr(b, "y.test"), addr(b, "X.Test")
	if x1 != x2 || x1 == y {
		t.Fatalf("x.test %s then %s, y.test %s", x1, x2, y)
	}
	if n, ok := tab.Name(netip.MustParseAddr(x1)); !ok || n != "x.test" {
		t.Fatalf("the table says %s is %q", x1, n)
	}
}
