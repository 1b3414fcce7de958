package glob

import (
	"strconv"
	"strings"
)

// A state is the set of positions the pattern can be at after matching some
// leading path segments: position i means segs[:i] are matched and segs[i]
// comes next; position len(segs) means the whole pattern is matched. States
// are small sorted slices; matching runs them as an NFA over path segments,
// which is what lets Expand prune a directory as soon as no position is left.
type state []int

// start returns the state at position i, closed over ** segments that may
// match zero segments.
func (p *Pattern) start(i int) state { return p.add(nil, i) }

// add inserts position i into s, and the positions after any ** at i that
// may match nothing (every ** but a trailing one, which needs a segment).
func (p *Pattern) add(s state, i int) state {
	for {
		s = s.insert(i)
		if i >= len(p.segs)-1 || p.segs[i].kind != segDoubleStar {
			return s
		}
		i++
	}
}

// step consumes one path segment, writing the next state over dst[:0] (which
// must not share memory with s) so that callers can reuse a buffer.
func (p *Pattern) step(dst, s state, name string) state {
	next := dst[:0]
	for _, i := range s {
		if i == len(p.segs) {
			continue
		}
		g := &p.segs[i]
		switch {
		case g.kind == segDoubleStar:
			next = p.add(next, i)   // ** goes on
			next = p.add(next, i+1) // or ends with this segment
		case g.match(name):
			next = p.add(next, i+1)
		}
	}
	return next
}

// accepts reports whether s has matched the whole pattern.
func (p *Pattern) accepts(s state) bool {
	return len(s) > 0 && s[len(s)-1] == len(p.segs)
}

// pending reports whether more segments could still lead to a match.
func (p *Pattern) pending(s state) bool {
	return len(s) > 0 && s[0] < len(p.segs)
}

// literals returns the names a directory's children must have to advance s,
// or ok == false when some pending position is not a literal and the
// directory has to be listed.
func (p *Pattern) literals(s state) (names []string, ok bool) {
	for _, i := range s {
		if i == len(p.segs) {
			continue
		}
		if p.segs[i].kind != segLiteral {
			return nil, false
		}
		names = append(names, p.segs[i].lit)
	}
	return names, true
}

func (s state) insert(i int) state {
	j := 0
	for j < len(s) && s[j] < i {
		j++
	}
	if j < len(s) && s[j] == i {
		return s
	}
	s = append(s, 0)
	copy(s[j+1:], s[j:])
	s[j] = i
	return s
}

// key identifies a state, for cycle detection when following symlinks.
func (s state) key() string {
	var b strings.Builder
	for _, i := range s {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(',')
	}
	return b.String()
}
