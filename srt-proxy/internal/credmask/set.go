// Package credmask puts masked secrets back (srt.mask.v1, MASK.md Flow
// step 4): where a request carries a mask's sentinel, in a header value
// (Set.Replace) or in its body as it streams (Set.NewReader), the secret
// goes upstream in its place.
//
// Matching is the same everywhere: at each position, left to right, the
// first mask (in the order given) whose sentinel starts there is replaced
// and the scan goes on after it; a byte no sentinel starts at is copied.
// (The protocol keeps live sentinels from overlapping, so at most one can
// start at a position; the order only matters to callers that do not.)
//
// Matching is constant time per byte with respect to the sentinels: at
// every position the 8 bytes there are compared as one word with the
// first 8 bytes of every sentinel (each distinct word once), and only a
// whole-word match leads to crypto/subtle.ConstantTimeCompare of every
// whole sentinel that fits. No comparison ends early on a partial match:
// the time spent depends on the input and on whether the first 8 bytes of
// a sentinel (all of it when shorter) occur there, never on how many
// bytes of one matched. Each occurrence of those 8 bytes costs the
// sentinels' length: srt's sentinels all start "fake_value_", so a body
// made of that costs a few times more per byte, and a sentinel whose
// first bytes repeat with a short period ("aaaa…", possible in srt proxy
// mode) up to its length per byte of a body made of them.
//
// Values are copied, never compared, and never part of an error or log
// line of this package.
package credmask

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// Set is the masks one request names, ready to be put back.
type Set struct {
	masks   []entry
	filters []filter // the distinct first words of the sentinels
	maxLen  int      // the longest sentinel
	sameLen bool     // every value is as long as its sentinel
}

type entry struct{ sentinel, value []byte }

// filter is a sentinel's first filterLen bytes as a little-endian word
// (p) and which of its bits count (m: all unless the sentinel is
// shorter): a position whose word w has w&m == p may start it.
type filter struct{ p, m uint64 }

// filterLen is how many bytes of the sentinels every position is compared
// with before whole comparisons.
const filterLen = 8

// ErrEmptySentinel is New's error for a mask whose sentinel is empty (the
// protocol's decoder refuses those first).
var ErrEmptySentinel = errors.New("a masked secret's sentinel is empty")

// New is the Set of masks; nil when there are none.
func New(masks []ask.Mask) (*Set, error) {
	if len(masks) == 0 {
		return nil, nil
	}
	s := &Set{sameLen: true, masks: make([]entry, 0, len(masks)), filters: make([]filter, 0, len(masks))}
	for _, m := range masks {
		if m.Sentinel == "" {
			return nil, ErrEmptySentinel
		}
		e := entry{sentinel: bytesOf(m.Sentinel), value: bytesOf(m.Value)}
		var p, k [filterLen]byte
		for i := range copy(p[:], e.sentinel) {
			k[i] = 0xff
		}
		f := filter{p: binary.LittleEndian.Uint64(p[:]), m: binary.LittleEndian.Uint64(k[:])}
		if !slices.Contains(s.filters, f) {
			s.filters = append(s.filters, f)
		}
		s.masks = append(s.masks, e)
		s.maxLen = max(s.maxLen, len(e.sentinel))
		s.sameLen = s.sameLen && len(m.Sentinel) == len(m.Value)
	}
	return s, nil
}

// bytesOf is s's bytes, without a copy: a Set only reads them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// SameLength reports whether every value is exactly as long as its
// sentinel: then a body keeps its length.
func (s *Set) SameLength() bool { return s.sameLen }

// MaxSentinel is the longest sentinel's length: a stream holds back at
// most one byte less.
func (s *Set) MaxSentinel() int { return s.maxLen }

// Replace returns v with every sentinel replaced by its value; v itself
// when it carries none.
func (s *Set) Replace(v string) string {
	b := bytesOf(v)
	for i := 0; i < len(b); i++ {
		if i = s.skip(b, i, len(b)); i < len(b) && s.confirm(b, i) >= 0 {
			out, _ := s.scan(make([]byte, 0, len(b)), b, i, true, math.MaxInt)
			return v[:i] + string(out)
		}
	}
	return v
}

// scan decides the positions of in from i on and appends what they give
// to out: a value where a sentinel starts, else the byte. A position is
// decided when every sentinel fits before the end of in, or, when final
// (the input ends with in), every position is. It stops after a
// replacement that brings out to limit bytes or more, and returns out and
// the first position not decided.
func (s *Set) scan(out, in []byte, i int, final bool, limit int) ([]byte, int) {
	end := len(in) - s.maxLen + 1
	if final {
		end = len(in)
	}
	run := i // the start of the bytes copied as they are
	for i < end {
		if i = s.skip(in, i, end); i == end {
			break
		}
		k := s.confirm(in, i)
		if k < 0 {
			i++
			continue
		}
		e := &s.masks[k]
		out = append(out, in[run:i]...)
		out = append(out, e.value...)
		i += len(e.sentinel)
		run = i
		if len(out) >= limit {
			return out, i
		}
	}
	return append(out, in[run:i]...), i
}

// skip returns the first position from i on, below end, where a sentinel
// may start: where the word there matches a sentinel's first word, or
// where fewer than filterLen bytes are left (every position there is
// compared whole); end if none.
func (s *Set) skip(in []byte, i, end int) int {
	stop := min(end, len(in)-filterLen+1)
	if len(s.filters) == 1 {
		f := s.filters[0]
		// Four positions a turn; each word is compared whole.
		for ; i+3 < stop; i += 4 {
			x := in[i : i+filterLen+3]
			if binary.LittleEndian.Uint64(x[0:])&f.m == f.p || binary.LittleEndian.Uint64(x[1:])&f.m == f.p ||
				binary.LittleEndian.Uint64(x[2:])&f.m == f.p || binary.LittleEndian.Uint64(x[3:])&f.m == f.p {
				break
			}
		}
		for ; i < stop; i++ {
			if binary.LittleEndian.Uint64(in[i:i+filterLen])&f.m == f.p {
				return i
			}
		}
		return min(i, end)
	}
	for ; i < stop; i++ {
		w := binary.LittleEndian.Uint64(in[i : i+filterLen])
		hit := false
		for _, f := range s.filters {
			if w&f.m == f.p {
				hit = true
			}
		}
		if hit {
			return i
		}
	}
	return min(i, end)
}

// confirm returns the index of the first mask whose sentinel starts at
// in[i], or -1: every sentinel that fits is compared whole, in constant
// time.
func (s *Set) confirm(in []byte, i int) int {
	found := -1
	for k := range s.masks {
		e := &s.masks[k]
		if i+len(e.sentinel) <= len(in) && subtle.ConstantTimeCompare(in[i:i+len(e.sentinel)], e.sentinel) == 1 && found < 0 {
			found = k
		}
	}
	return found
}
