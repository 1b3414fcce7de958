// Package dnsmsg writes and reads the few DNS messages the capture
// benchmark needs (RFC 1035 §4.1): an A query, the check of its answer,
// and the answer of the host-side baseline responder. It is benchmark
// code, not srt's name server (srt-proxy/internal/dnsserver), and it is
// kept to bytes by hand so that srt's module needs no DNS library.
package dnsmsg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// The fields of a message this package reads and writes (RFC 1035 §4.1.1,
// §3.2.2–3.2.4).
const (
	headerLen = 12
	typeA     = 1
	classIN   = 1
	flagQR    = 0x8000 // a response
	flagRD    = 0x0100 // recursion desired, as stub resolvers send it
	flagRA    = 0x0080
	maskOp    = 0x7800 // the opcode
	maskRcode = 0x000f
	maxName   = 255 // octets of a name on the wire (§2.3.4)
	maxLabel  = 63
)

// Query is an A query for name (a dotted host name) with the given id.
func Query(id uint16, name string) ([]byte, error) {
	name = strings.TrimSuffix(name, ".")
	b := make([]byte, headerLen, headerLen+len(name)+6)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], flagRD)
	binary.BigEndian.PutUint16(b[4:], 1) // one question
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > maxLabel {
			return nil, fmt.Errorf("dnsmsg: bad name %q: empty label or one longer than %d octets", name, maxLabel)
		}
		b = append(b, byte(len(label)))
		b = append(b, label...)
	}
	b = append(b, 0)
	if len(b)-headerLen > maxName {
		return nil, fmt.Errorf("dnsmsg: name %q is longer than %d octets", name, maxName)
	}
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, typeA), classIN), nil
}

var errShort = errors.New("dnsmsg: message too short")

// skipName returns the offset just past the name that starts at off: a
// run of labels ending with the root label or with a compression pointer
// (which ends the name where it is written; it is not followed).
func skipName(m []byte, off int) (int, error) {
	for start := off; ; {
		if off >= len(m) {
			return 0, errShort
		}
		switch l := int(m[off]); {
		case l == 0:
			return off + 1, nil
		case l&0xc0 == 0xc0:
			if off+2 > len(m) {
				return 0, errShort
			}
			return off + 2, nil
		case l&0xc0 != 0:
			return 0, fmt.Errorf("dnsmsg: label type %#x at offset %d", l&0xc0, off)
		default:
			off += 1 + l
			if off-start > maxName {
				return 0, errors.New("dnsmsg: name longer than 255 octets")
			}
		}
	}
}

// questionEnd checks that m holds one question after the header and
// returns the offset just past it.
func questionEnd(m []byte) (int, error) {
	if len(m) < headerLen {
		return 0, errShort
	}
	if n := binary.BigEndian.Uint16(m[4:]); n != 1 {
		return 0, fmt.Errorf("dnsmsg: %d questions, want 1", n)
	}
	off, err := skipName(m, headerLen)
	if err != nil {
		return 0, err
	}
	if off+4 > len(m) {
		return 0, errShort
	}
	return off + 4, nil
}

// CheckAnswer checks that m answers the query with the given id without
// an error and returns the address of its first A record.
func CheckAnswer(m []byte, id uint16) (netip.Addr, error) {
	off, err := questionEnd(m)
	if err != nil {
		return netip.Addr{}, err
	}
	flags := binary.BigEndian.Uint16(m[2:])
	switch {
	case binary.BigEndian.Uint16(m) != id:
		return netip.Addr{}, fmt.Errorf("dnsmsg: id %d, want %d", binary.BigEndian.Uint16(m), id)
	case flags&flagQR == 0 || flags&maskOp != 0:
		return netip.Addr{}, fmt.Errorf("dnsmsg: not a response to a standard query (flags %#04x)", flags)
	case flags&maskRcode != 0:
		return netip.Addr{}, fmt.Errorf("dnsmsg: response code %d", flags&maskRcode)
	}
	for n := binary.BigEndian.Uint16(m[6:]); n > 0; n-- {
		if off, err = skipName(m, off); err != nil {
			return netip.Addr{}, err
		}
		if off+10 > len(m) {
			return netip.Addr{}, errShort
		}
		typ, class, size := binary.BigEndian.Uint16(m[off:]), binary.BigEndian.Uint16(m[off+2:]), int(binary.BigEndian.Uint16(m[off+8:]))
		off += 10
		if off+size > len(m) {
			return netip.Addr{}, errShort
		}
		if typ == typeA && class == classIN && size == 4 {
			return netip.AddrFrom4([4]byte(m[off : off+4])), nil
		}
		off += size
	}
	return netip.Addr{}, errors.New("dnsmsg: no A record in the answer")
}

// Answer is the baseline responder's answer to query: its header and
// question, then one A record for addr (TTL 5 s, the name a pointer to the
// question's). Anything after the question (an EDNS record) is left out.
func Answer(query []byte, addr netip.Addr) ([]byte, error) {
	if !addr.Is4() {
		return nil, errors.New("dnsmsg: an A record needs an IPv4 address")
	}
	end, err := questionEnd(query)
	if err != nil {
		return nil, err
	}
	if flags := binary.BigEndian.Uint16(query[2:]); flags&flagQR != 0 {
		return nil, errors.New("dnsmsg: a response, not a query")
	}
	r := make([]byte, end, end+16)
	copy(r, query)
	binary.BigEndian.PutUint16(r[2:], flagQR|flagRD|flagRA)
	binary.BigEndian.PutUint16(r[6:], 1) // one answer,
	binary.BigEndian.PutUint32(r[8:], 0) // no authority or additional records
	r = append(r, 0xc0, headerLen)       // the question's name
	r = binary.BigEndian.AppendUint16(r, typeA)
	r = binary.BigEndian.AppendUint16(r, classIN)
	r = binary.BigEndian.AppendUint32(r, 5)
	r = binary.BigEndian.AppendUint16(r, 4)
	a := addr.As4()
	return append(r, a[:]...), nil
}
