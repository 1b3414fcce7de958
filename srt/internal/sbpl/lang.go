package sbpl

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// This file decides questions about the sets of paths filters match, by
// Brzozowski derivatives over regular expressions: whether two filters
// match the same paths, and whether two can match a common path. Answers
// are over canonical absolute paths only ("/" or "/name/…", no empty
// name), which is what Seatbelt matches: `^/a/(.*/)?x$` and
// `^/a(/[^/]+)*/x$` differ only on "/a//x", which no vnode has. A question
// whose expressions use what is not modelled (anchors inside, word
// boundaries), or that needs more than maxStates states, has no answer
// (errUndecided), and callers then assume the worst.

var errUndecided = errors.New("sbpl: undecided")

const maxStates = 1500

// rx is a regular expression over runes, built only by the constructors
// below, which keep it in a normal form (flattened, sorted, deduplicated
// alternatives and intersections) so that derivatives are finitely many.
type rx struct {
	op   byte   // '0' none, 'e' empty string, 'c' class, '.' concat, '|' alt, '*' star, '&' and
	rs   []rune // class: sorted lo,hi pairs
	subs []*rx
	key  string
}

var (
	rxNone  = &rx{op: '0', key: "0"}
	rxEmpty = &rx{op: 'e', key: "e"}
	rxAny   = class([]rune{0, unicode.MaxRune})
)

func class(rs []rune) *rx {
	if len(rs) == 0 {
		return rxNone
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < len(rs); i += 2 {
		b.WriteString(strconv.Itoa(int(rs[i])) + "-" + strconv.Itoa(int(rs[i+1])) + ",")
	}
	b.WriteString("]")
	return &rx{op: 'c', rs: rs, key: b.String()}
}

func keyOfSubs(op byte, subs []*rx) string {
	var b strings.Builder
	b.WriteByte(op)
	b.WriteByte('(')
	for _, s := range subs {
		b.WriteString(s.key)
		b.WriteByte(' ')
	}
	b.WriteByte(')')
	return b.String()
}

func cat(xs ...*rx) *rx {
	var subs []*rx
	for _, x := range xs {
		switch x.op {
		case '0':
			return rxNone
		case 'e':
		case '.':
			subs = append(subs, x.subs...)
		default:
			subs = append(subs, x)
		}
	}
	switch len(subs) {
	case 0:
		return rxEmpty
	case 1:
		return subs[0]
	}
	return &rx{op: '.', subs: subs, key: keyOfSubs('.', subs)}
}

// setOf builds an alternation ('|') or intersection ('&') in normal form.
func setOf(op byte, xs ...*rx) *rx {
	seen := map[string]*rx{}
	var add func(x *rx)
	add = func(x *rx) {
		if x.op == op {
			for _, s := range x.subs {
				add(s)
			}
			return
		}
		seen[x.key] = x
	}
	for _, x := range xs {
		add(x)
	}
	if op == '|' {
		delete(seen, "0")
	} else if _, ok := seen["0"]; ok {
		return rxNone
	}
	subs := make([]*rx, 0, len(seen))
	for _, x := range seen {
		subs = append(subs, x)
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].key < subs[j].key })
	switch len(subs) {
	case 0:
		if op == '|' {
			return rxNone
		}
		return star(rxAny)
	case 1:
		return subs[0]
	}
	return &rx{op: op, subs: subs, key: keyOfSubs(op, subs)}
}

func star(x *rx) *rx {
	switch x.op {
	case '*':
		return x
	case '0', 'e':
		return rxEmpty
	}
	return &rx{op: '*', subs: []*rx{x}, key: "*(" + x.key + ")"}
}

func (x *rx) nullable() bool {
	switch x.op {
	case 'e', '*':
		return true
	case '.', '&':
		for _, s := range x.subs {
			if !s.nullable() {
				return false
			}
		}
		return true
	case '|':
		for _, s := range x.subs {
			if s.nullable() {
				return true
			}
		}
	}
	return false
}

func (x *rx) deriv(c rune) *rx {
	switch x.op {
	case 'c':
		for i := 0; i < len(x.rs); i += 2 {
			if x.rs[i] <= c && c <= x.rs[i+1] {
				return rxEmpty
			}
		}
		return rxNone
	case '.':
		head := x.subs[0]
		hd := head.deriv(c)
		if hd.op == '0' && !head.nullable() {
			return rxNone // no tail built: the common case, cheaply
		}
		tail := cat(x.subs[1:]...)
		d := cat(hd, tail)
		if head.nullable() {
			return setOf('|', d, tail.deriv(c))
		}
		return d
	case '|', '&':
		ds := make([]*rx, len(x.subs))
		for i, s := range x.subs {
			ds[i] = s.deriv(c)
			if x.op == '&' && ds[i].op == '0' {
				return rxNone
			}
		}
		return setOf(x.op, ds...)
	case '*':
		return cat(x.subs[0].deriv(c), x)
	}
	return rxNone
}

// bounds collects the points where x's classes start and end.
func (x *rx) bounds(into map[rune]bool) {
	if x.op == 'c' {
		for i := 0; i < len(x.rs); i += 2 {
			into[x.rs[i]] = true
			if x.rs[i+1] < unicode.MaxRune {
				into[x.rs[i+1]+1] = true
			}
		}
	}
	for _, s := range x.subs {
		s.bounds(into)
	}
}

// alphabet is one rune of each class of runes that no expression tells
// apart.
func alphabet(xs ...*rx) []rune {
	pts := map[rune]bool{0: true}
	for _, x := range xs {
		x.bounds(pts)
	}
	out := make([]rune, 0, len(pts))
	for r := range pts {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// canonicalPaths is "/" or one or more "/name".
var canonicalPaths = func() *rx {
	name := class([]rune{0, '/' - 1, '/' + 1, unicode.MaxRune})
	slash := class([]rune{'/', '/'})
	comp := cat(slash, name, star(name))
	return setOf('|', slash, cat(comp, star(comp)))
}()

// fromRegex reads a Seatbelt regex (matched anywhere unless anchored).
func fromRegex(s string) (*rx, error) {
	re, err := syntax.Parse(s, syntax.Perl|syntax.DotNL)
	if err != nil {
		return nil, errUndecided
	}
	re = re.Simplify()
	var items []*syntax.Regexp
	if re.Op == syntax.OpConcat {
		items = re.Sub
	} else {
		items = []*syntax.Regexp{re}
	}
	var parts []*rx
	if len(items) > 0 && (items[0].Op == syntax.OpBeginText || items[0].Op == syntax.OpBeginLine) {
		items = items[1:]
	} else {
		parts = append(parts, star(rxAny))
	}
	tailAny := true
	if n := len(items); n > 0 && (items[n-1].Op == syntax.OpEndText || items[n-1].Op == syntax.OpEndLine) {
		items, tailAny = items[:n-1], false
	}
	for _, it := range items {
		x, err := convert(it)
		if err != nil {
			return nil, err
		}
		parts = append(parts, x)
	}
	if tailAny {
		parts = append(parts, star(rxAny))
	}
	return cat(parts...), nil
}

func convert(re *syntax.Regexp) (*rx, error) {
	switch re.Op {
	case syntax.OpNoMatch:
		return rxNone, nil
	case syntax.OpEmptyMatch:
		return rxEmpty, nil
	case syntax.OpLiteral:
		var xs []*rx
		for _, r := range re.Rune {
			rs := []rune{r, r}
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					rs = append(rs, f, f)
				}
				rs = normRanges(rs)
			}
			xs = append(xs, class(rs))
		}
		return cat(xs...), nil
	case syntax.OpCharClass:
		return class(normRanges(append([]rune(nil), re.Rune...))), nil
	case syntax.OpAnyChar:
		return rxAny, nil
	case syntax.OpAnyCharNotNL:
		return class([]rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}), nil
	case syntax.OpCapture:
		return convert(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		x, err := convert(re.Sub[0])
		if err != nil {
			return nil, err
		}
		switch re.Op {
		case syntax.OpStar:
			return star(x), nil
		case syntax.OpPlus:
			return cat(x, star(x)), nil
		}
		return setOf('|', x, rxEmpty), nil
	case syntax.OpConcat, syntax.OpAlternate:
		var xs []*rx
		for _, s := range re.Sub {
			x, err := convert(s)
			if err != nil {
				return nil, err
			}
			xs = append(xs, x)
		}
		if re.Op == syntax.OpConcat {
			return cat(xs...), nil
		}
		return setOf('|', xs...), nil
	}
	return nil, errUndecided
}

// normRanges sorts and merges lo,hi pairs.
func normRanges(rs []rune) []rune {
	type rg struct{ lo, hi rune }
	var v []rg
	for i := 0; i < len(rs); i += 2 {
		v = append(v, rg{rs[i], rs[i+1]})
	}
	sort.Slice(v, func(i, j int) bool { return v[i].lo < v[j].lo })
	var out []rune
	for _, r := range v {
		if n := len(out); n > 0 && r.lo <= out[n-1]+1 {
			if r.hi > out[n-1] {
				out[n-1] = r.hi
			}
			continue
		}
		out = append(out, r.lo, r.hi)
	}
	return out
}

// atomLang is the set of paths an atom matches, for subpath, literal and
// regex atoms.
func atomLang(a atom) (*rx, error) {
	if a.kind != 'r' && !strings.HasPrefix(a.path, "/") {
		return nil, errUndecided
	}
	switch a.kind {
	case 's':
		if a.path == "/" {
			return star(rxAny), nil
		}
		return fromRegex("^" + regexp.QuoteMeta(a.path) + "(/.*)?$")
	case 'l':
		return fromRegex("^" + regexp.QuoteMeta(a.path) + "$")
	case 'r':
		return fromRegex(a.path)
	}
	return nil, errUndecided
}

// sameLang says whether x and y match the same canonical paths.
func sameLang(x, y *rx) (bool, error) {
	return walkPairs(x, y, false, func(a, b *rx) bool { return a.op == '0' && b.op == '0' }, func(a, b *rx) bool { return a.nullable() != b.nullable() })
}

// subLang says whether every canonical path x matches, y matches.
func subLang(x, y *rx) (bool, error) {
	return walkPairs(x, y, true, func(a, b *rx) bool { return a.op == '0' }, func(a, b *rx) bool { return a.nullable() && !b.nullable() })
}

// walkPairs runs x and y (on canonical paths) side by side over every
// string: false when a pair of states reached is bad; a pair that is done
// is not followed further. With subset, a pair is done once x's side
// matches nothing (y's derivative is then not even computed).
func walkPairs(x, y *rx, subset bool, done, bad func(a, b *rx) bool) (bool, error) {
	x, y = setOf('&', x, canonicalPaths), setOf('&', y, canonicalPaths)
	sigma := alphabet(x, y)
	d := newDerivs()
	type pair struct{ a, b *rx }
	seen := map[string]bool{}
	todo := []pair{{x, y}}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if done(p.a, p.b) {
			continue
		}
		k := p.a.key + "\x00" + p.b.key
		if seen[k] {
			continue
		}
		if seen[k] = true; len(seen) > maxStates {
			return false, errUndecided
		}
		if bad(p.a, p.b) {
			return false, nil
		}
		for _, c := range sigma {
			da := d.of(p.a, c)
			if da.op == '0' && subset {
				continue // x matches nothing more: y's side cannot matter
			}
			todo = append(todo, pair{da, d.of(p.b, c)})
		}
	}
	return true, nil
}

// emptyLang says whether x matches no canonical path.
func emptyLang(x *rx) (bool, error) {
	x = setOf('&', x, canonicalPaths)
	sigma := alphabet(x)
	d := newDerivs()
	seen := map[string]bool{}
	todo := []*rx{x}
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if s.op == '0' || seen[s.key] {
			continue
		}
		if seen[s.key] = true; len(seen) > maxStates {
			return false, errUndecided
		}
		if s.nullable() {
			return false, nil
		}
		for _, c := range sigma {
			todo = append(todo, d.of(s, c))
		}
	}
	return true, nil
}

// literalPrefix is the text every path an atom matches starts with, when
// it is anchored (ok false for a regex without "^").
func literalPrefix(a atom) (string, bool) {
	switch a.kind {
	case 's', 'l':
		return a.path, strings.HasPrefix(a.path, "/")
	case 'r':
		if !strings.HasPrefix(a.path, "^") {
			return "", false
		}
		re, err := syntax.Parse(a.path, syntax.Perl|syntax.DotNL)
		if err != nil {
			return "", false
		}
		re = re.Simplify()
		if re.Op != syntax.OpConcat || len(re.Sub) == 0 || (re.Sub[0].Op != syntax.OpBeginText && re.Sub[0].Op != syntax.OpBeginLine) {
			return "", false
		}
		var b strings.Builder
		for _, s := range re.Sub[1:] {
			if s.Op != syntax.OpLiteral || s.Flags&syntax.FoldCase != 0 {
				break
			}
			b.WriteString(string(s.Rune))
		}
		return b.String(), true
	}
	return "", false
}

// derivs remembers derivatives during one search. States are interned by
// their normal form, so a state reached twice is one pointer and its
// derivatives are computed once.
type derivs struct {
	memo   map[derivKey]*rx
	intern map[string]*rx
}

type derivKey struct {
	x *rx
	c rune
}

func newDerivs() *derivs {
	return &derivs{memo: map[derivKey]*rx{}, intern: map[string]*rx{}}
}

func (d *derivs) of(x *rx, c rune) *rx {
	k := derivKey{x, c}
	if y, ok := d.memo[k]; ok {
		return y
	}
	y := x.deriv(c)
	if z, ok := d.intern[y.key]; ok {
		y = z
	} else {
		d.intern[y.key] = y
	}
	d.memo[k] = y
	return y
}
