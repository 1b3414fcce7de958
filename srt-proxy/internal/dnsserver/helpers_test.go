package dnsserver

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// query builds a query for name and type; edns adds an OPT record with
// that payload size (0: none).
func query(id uint16, name string, typ layers.DNSType, edns uint16) []byte {
	q := &layers.DNS{ID: id, RD: true, Questions: []layers.DNSQuestion{{Name: []byte(name), Type: typ, Class: layers.DNSClassIN}}}
	if edns > 0 {
		q.Additionals = []layers.DNSResourceRecord{{Type: layers.DNSTypeOPT, Class: layers.DNSClass(edns)}}
	}
	buf := gopacket.NewSerializeBuffer()
	if err := q.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// reply is an answer as a strict reader of the wire sees it.
type reply struct {
	id                     uint16
	qr, tc, rd, ra         bool
	opcode                 int
	rcode                  int // with the extended bits of an OPT record
	questions              []string
	answers                []string // "name type ttl address"
	opts                   int      // OPT records
	authorities, additions int
}

// parse reads an answer strictly, without gopacket: every name, every
// fixed field and every record's data must be there, and nothing may
// follow the last record. It is the tests' own reader, so that a bug in
// gopacket's writer cannot hide behind the same bug in its reader.
func parse(b []byte) (*reply, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("%d bytes: no header", len(b))
	}
	r := &reply{id: binary.BigEndian.Uint16(b), qr: b[2]&0x80 != 0, opcode: int(b[2] >> 3 & 0xf),
		tc: b[2]&0x02 != 0, rd: b[2]&0x01 != 0, ra: b[3]&0x80 != 0, rcode: int(b[3] & 0xf)}
	counts := [4]int{}
	for i := range counts {
		counts[i] = int(binary.BigEndian.Uint16(b[4+2*i:]))
	}
	off := 12
	for range counts[0] {
		name, next, err := readName(b, off)
		if err != nil {
			return nil, err
		}
		if next+4 > len(b) {
			return nil, fmt.Errorf("question cut short at %d", next)
		}
		r.questions = append(r.questions, fmt.Sprintf("%s %d %d", name, binary.BigEndian.Uint16(b[next:]), binary.BigEndian.Uint16(b[next+2:])))
		off = next + 4
	}
	for section := 1; section < 4; section++ {
		for range counts[section] {
			name, next, err := readName(b, off)
			if err != nil {
				return nil, err
			}
			if next+10 > len(b) {
				return nil, fmt.Errorf("record cut short at %d", next)
			}
			typ := binary.BigEndian.Uint16(b[next:])
			ttl := binary.BigEndian.Uint32(b[next+4:])
			n := int(binary.BigEndian.Uint16(b[next+8:]))
			data := next + 10
			if data+n > len(b) {
				return nil, fmt.Errorf("record data cut short at %d", data)
			}
			switch {
			case section == 1:
				a, ok := netip.AddrFromSlice(b[data : data+n])
				if !ok || (typ == 1) != (n == 4) || (typ == 28) != (n == 16) {
					return nil, fmt.Errorf("answer of type %d with %d bytes", typ, n)
				}
				r.answers = append(r.answers, fmt.Sprintf("%s %d %d %s", name, typ, ttl, a))
			case typ == 41:
				r.opts++
				r.rcode |= int(ttl>>24) << 4
			case section == 2:
				r.authorities++
			default:
				r.additions++
			}
			off = data + n
		}
	}
	if off != len(b) {
		return nil, fmt.Errorf("%d stray bytes after the last record", len(b)-off)
	}
	return r, nil
}

// readName reads a name at off: labels, or a pointer to an earlier
// offset; at most 255 bytes on the wire.
func readName(b []byte, off int) (string, int, error) {
	var labels []string
	end, size := -1, 0
	for jumps := 0; ; {
		if off >= len(b) {
			return "", 0, fmt.Errorf("name runs past the end")
		}
		l := int(b[off])
		switch {
		case l == 0:
			if end < 0 {
				end = off + 1
			}
			return strings.Join(labels, "."), end, nil
		case l&0xc0 == 0xc0:
			if off+2 > len(b) || jumps > 64 {
				return "", 0, fmt.Errorf("bad pointer")
			}
			if end < 0 {
				end = off + 2
			}
			next := int(binary.BigEndian.Uint16(b[off:]) & 0x3fff)
			if next >= off {
				return "", 0, fmt.Errorf("forward pointer")
			}
			off = next
			jumps++
		case l > 63:
			return "", 0, fmt.Errorf("label length %#x", l)
		default:
			if off+1+l > len(b) {
				return "", 0, fmt.Errorf("label runs past the end")
			}
			labels = append(labels, string(b[off+1:off+1+l]))
			size += 1 + l
			if size > 254 {
				return "", 0, fmt.Errorf("name longer than 255 bytes")
			}
			off += 1 + l
		}
	}
}

func mustParse(t testing.TB, b []byte) *reply {
	t.Helper()
	r, err := parse(b)
	if err != nil {
		t.Fatalf("answer % x: %v", b, err)
	}
	return r
}
