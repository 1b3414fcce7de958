package credmask

import "io"

// Reader is a body with the masks put back as it streams: what it has
// read of its source but not yet returned is at most one sentinel less a
// byte (held back until it shows whether a sentinel starts there), and
// what it has decided but not returned at most outLimit and one value. A
// sentinel split across reads of the source, at any point, is replaced.
type Reader struct {
	set *Set
	src io.Reader
	in  []byte // read from src: in[pos:] not yet decided
	pos int
	out []byte // decided: out[off:] not yet returned
	off int
	err error // src's error (io.EOF at its end); in is then final
}

const (
	readChunk = 32 << 10 // bytes read from the source at once
	outLimit  = 32 << 10 // a scan stops once it has decided this much
)

// NewReader returns src with s's sentinels replaced by their values.
func (s *Set) NewReader(src io.Reader) *Reader {
	return &Reader{set: s, src: src, in: make([]byte, 0, s.maxLen-1+readChunk), out: make([]byte, 0, outLimit)}
}

func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if r.off < len(r.out) {
			n := copy(p, r.out[r.off:])
			r.off += n
			return n, nil
		}
		r.out, r.off = r.out[:0], 0
		final := r.err != nil
		if r.pos < len(r.in) && (final || len(r.in)-r.pos >= r.set.maxLen) {
			r.out, r.pos = r.set.scan(r.out, r.in, r.pos, final && r.err == io.EOF, outLimit)
			if len(r.out) > 0 {
				continue
			}
		}
		if final {
			// A source that failed leaves its held-back bytes unsent: the
			// body is broken anyway.
			return 0, r.err
		}
		// Keep what is undecided (less than a sentinel), read after it.
		r.in = r.in[:copy(r.in, r.in[r.pos:])]
		r.pos = 0
		n, err := r.src.Read(r.in[len(r.in):cap(r.in)])
		r.in = r.in[:len(r.in)+n]
		r.err = err
	}
}
