// Package dnsserver is the sandbox's name server: srt-proxy serves it on
// the UDP socket and TCP listener srt hands over for each sandbox
// (handoff role "dns"), at the address the sandbox's resolv.conf names.
// It answers every A and AAAA question itself, with the addresses a
// fakeip.Table keeps for the name, and asks nobody: no query leaves the
// host, so DNS is no channel out of the sandbox. The connection the
// program then makes to a fake address is captured and decided as a
// connection to the name (internal/capture).
//
//	sandbox                     dnsserver                 fakeip.Table
//	  │── A example.com ──────────▶│── Lookup(example.com) ──▶│
//	  │◀── A 198.18.128.7, TTL 5 ──│◀── 198.18.128.7 ─────────│
//	  │── TCP to 198.18.128.7:443 ─▶ capture ── Name ─▶ "example.com" ─▶ decider
//
// The answers, one question per query:
//
//   - A or AAAA for "localhost" or a name under it: 127.0.0.1 or ::1
//     (RFC 6761 §6.3).
//   - A or AAAA for any other host name: its fake address. A name the
//     settings deny gets one too; its connections are refused.
//   - A or AAAA for a name that is no host name (hostname.Canonical
//     refuses it, or it spells an IP address): NXDOMAIN.
//   - Any other type: NOERROR and no data.
//   - Class other than IN: REFUSED. Opcode other than QUERY: NOTIMP.
//   - A query that does not parse, or that is not one question with at
//     most an EDNS OPT record beside it: FORMERR. EDNS version other than
//     0: BADVERS (RFC 6891 §6.1.3).
//   - Shorter than a header, or a response: no answer at all.
//
// A UDP answer larger than 512 bytes (or the query's EDNS payload size, at
// most 1232) is sent truncated, with no records, so that the client asks
// again over TCP.
package dnsserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
)

// TTL is the time to live of every answer, in seconds: short, so that a
// program asks again (and keeps its name in the table) rather than holding
// an address whose name may have been evicted.
const TTL = 5

// UDP payload sizes: the classic limit (RFC 1035 §4.2.1), and the largest
// this server offers over EDNS (the DNS flag day 2020 figure, which fits
// every common path MTU).
const (
	udpClassic = 512
	udpMax     = 1232
)

// extended RCODE BADVERS (RFC 6891 §9): the upper 8 of its 12 bits travel
// in the OPT record's TTL.
const badVers = 16

// Answerer answers queries from a table.
type Answerer struct {
	Table *fakeip.Table // required

	idle time.Duration // replaces idleTimeout (serve.go); tests shorten it
}

// errMalformed is any query that does not parse.
var errMalformed = errors.New("malformed query")

// Answer returns the answer to one query as it came (a UDP datagram, or a
// TCP message without its length), or nil when there is none to give. udp
// bounds the answer's size to what the client accepts over UDP.
func (a *Answerer) Answer(query []byte, udp bool) []byte {
	if len(query) < 12 || query[2]&0x80 != 0 {
		return nil // no header to answer, or a response: never answer those
	}
	q, err := decode(query)
	if err != nil {
		return headerOnly(query, layers.DNSResponseCodeFormErr)
	}
	if q.OpCode != layers.DNSOpCodeQuery {
		return headerOnly(query, layers.DNSResponseCodeNotImp)
	}
	opt, ok := ednsOf(q)
	if len(q.Questions) != 1 || len(q.Answers) != 0 || len(q.Authorities) != 0 || !ok || !wireName(q.Questions[0].Name) {
		return headerOnly(query, layers.DNSResponseCodeFormErr)
	}
	r := &layers.DNS{ID: q.ID, QR: true, OpCode: q.OpCode, RD: q.RD, RA: true, Questions: q.Questions}
	limit := udpClassic
	if opt != nil {
		limit = max(udpClassic, min(int(opt.Class), udpMax))
		reply := layers.DNSResourceRecord{Type: layers.DNSTypeOPT, Class: udpMax}
		if version := opt.TTL >> 16 & 0xff; version != 0 {
			reply.TTL = badVers >> 4 << 24
			r.Additionals = []layers.DNSResourceRecord{reply}
			return encode(r, limit, udp)
		}
		r.Additionals = []layers.DNSResourceRecord{reply}
	}
	question := q.Questions[0]
	switch {
	case question.Class != layers.DNSClassIN:
		r.ResponseCode = layers.DNSResponseCodeRefused
	case question.Type == layers.DNSTypeA || question.Type == layers.DNSTypeAAAA:
		r.ResponseCode, r.Answers = a.address(question)
	}
	return encode(r, limit, udp)
}

// address answers an A or AAAA question.
func (a *Answerer) address(q layers.DNSQuestion) (layers.DNSResponseCode, []layers.DNSResourceRecord) {
	name, err := hostname.Canonical(string(q.Name))
	if err != nil {
		return layers.DNSResponseCodeNXDomain, nil
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return layers.DNSResponseCodeNXDomain, nil // a name that spells an address
	}
	var ip net.IP
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		ip = net.IPv4(127, 0, 0, 1)
		if q.Type == layers.DNSTypeAAAA {
			ip = net.IPv6loopback
		}
	default:
		v4, v6 := a.Table.Lookup(name)
		ip = v4.AsSlice()
		if q.Type == layers.DNSTypeAAAA {
			ip = v6.AsSlice()
		}
	}
	// The record's name is the question's as asked, in the client's
	// letter case (which some resolvers randomise and check).
	return layers.DNSResponseCodeNoErr, []layers.DNSResourceRecord{{
		Name: q.Name, Type: q.Type, Class: layers.DNSClassIN, TTL: TTL, IP: ip,
	}}
}

// decode parses a query with gopacket. gopacket v1.1.19 reads the fixed
// fields after a name without checking that they are there (an index out
// of range on a query cut short after a name): that panic is a malformed
// query, like any other decoding error.
func decode(b []byte) (q *layers.DNS, err error) {
	defer func() {
		if recover() != nil {
			q, err = nil, errMalformed
		}
	}()
	q = &layers.DNS{}
	if err := q.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return q, nil
}

// ednsOf returns the query's OPT record (nil when it has none); ok is
// false when the additional section holds anything else, or an OPT record
// not owned by the root.
func ednsOf(q *layers.DNS) (opt *layers.DNSResourceRecord, ok bool) {
	switch len(q.Additionals) {
	case 0:
		return nil, true
	case 1:
		rr := &q.Additionals[0]
		return rr, rr.Type == layers.DNSTypeOPT && len(rr.Name) == 0
	}
	return nil, false
}

// wireName reports whether gopacket writes name back as it came: labels
// of 1–63 bytes joined by dots, at most 255 bytes on the wire (RFC 1035
// §2.3.4), or the root (empty). A name whose labels held dots or empty
// labels does not survive the trip, and is answered FORMERR.
func wireName(name []byte) bool {
	if len(name) == 0 {
		return true
	}
	if len(name)+2 > 255 {
		return false
	}
	for _, label := range strings.Split(string(name), ".") {
		if len(label) == 0 || len(label) > 63 {
			return false
		}
	}
	return true
}

// headerOnly is an answer that carries a response code and nothing else:
// the query's id, opcode and RD flag.
func headerOnly(query []byte, code layers.DNSResponseCode) []byte {
	h := make([]byte, 12)
	copy(h, query[:2])
	h[2] = 0x80 | query[2]&0x79 // QR, opcode, RD
	h[3] = byte(code)
	return h
}

// encode writes r. Over UDP, an answer larger than limit goes without its
// records, truncated (TC), so that the client asks again over TCP.
func encode(r *layers.DNS, limit int, udp bool) []byte {
	b := serialize(r)
	if udp && len(b) > limit {
		r.TC, r.Answers = true, nil
		b = serialize(r)
	}
	return b
}

func serialize(r *layers.DNS) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := r.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		// Only record types this package never writes fail.
		panic(fmt.Sprintf("dnsserver: serializing an answer: %v", err))
	}
	b := buf.Bytes()
	// gopacket v1.1.19 sizes a question as its name's length plus 6
	// bytes, but writes the root name (empty) in one byte, not two: the
	// answer then ends in a stray zero byte, which a strict client
	// refuses.
	for _, q := range r.Questions {
		if len(q.Name) == 0 {
			b = b[:len(b)-1]
		}
	}
	return b
}

// lengthOf is the big-endian length prefix of a TCP message.
func lengthOf(b []byte) int { return int(binary.BigEndian.Uint16(b)) }
