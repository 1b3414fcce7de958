package sbpl

import (
	"regexp"
	"strings"
)

// oracle answers, with memory, the path-set questions normalisation and
// diffing ask about atoms (lang.go).
type oracle struct {
	langs map[string]*rx
	bad   map[string]bool
	disj  map[string]bool
	same  map[string]bool
	sub   map[string]bool
	m     matcher
	wits  map[string][]string
	pre   map[string]prefix
}

// prefix is an atom's anchored literal prefix (literalPrefix).
type prefix struct {
	text string
	ok   bool
}

// apart says whether two atoms' anchored literal prefixes (remembered)
// rule out any common path: neither is a prefix of the other.
func (o *oracle) apart(a, b atom) bool {
	get := func(x atom) prefix {
		p, found := o.pre[x.key]
		if !found {
			p.text, p.ok = literalPrefix(x)
			o.pre[x.key] = p
		}
		return p
	}
	p, q := get(a), get(b)
	return p.ok && q.ok && !strings.HasPrefix(p.text, q.text) && !strings.HasPrefix(q.text, p.text)
}

func newOracle() *oracle {
	return &oracle{sub: map[string]bool{}, langs: map[string]*rx{}, bad: map[string]bool{}, disj: map[string]bool{}, same: map[string]bool{}, m: matcher{res: map[string]*regexp.Regexp{}}, wits: map[string][]string{}, pre: map[string]prefix{}}
}

func (o *oracle) lang(a atom) *rx {
	if a.kind == 0 || o.bad[a.key] {
		return nil
	}
	if x, ok := o.langs[a.key]; ok {
		return x
	}
	x, err := atomLang(a)
	if err != nil {
		o.bad[a.key] = true
		return nil
	}
	o.langs[a.key] = x
	return x
}

// atomsDisjoint says whether no canonical path matches both a and b
// (false when that is not known).
func (o *oracle) atomsDisjoint(a, b atom) bool {
	if a.kind == 0 || b.kind == 0 {
		return false
	}
	if a.kind != 'r' && b.kind != 'r' {
		if !strings.HasPrefix(a.path, "/") || !strings.HasPrefix(b.path, "/") {
			return false // not a path Seatbelt compares: unknown
		}
		switch {
		case a.kind == 's' && b.kind == 's':
			return !under(a.path, b.path) && !under(b.path, a.path)
		case a.kind == 's':
			return !under(b.path, a.path)
		case b.kind == 's':
			return !under(a.path, b.path)
		}
		return a.path != b.path
	}
	k := a.key + "\x00" + b.key
	if v, ok := o.disj[k]; ok {
		return v
	}
	if o.apart(a, b) {
		o.disj[k] = true
		return true
	}
	if o.meet(a, b) {
		o.disj[k] = false
		return false
	}
	v := false
	if x, y := o.lang(a), o.lang(b); x != nil && y != nil {
		empty, err := emptyLang(setOf('&', x, y))
		v = err == nil && empty
	}
	o.disj[k] = v
	return v
}

// disjoint says whether no request matches both conjunctions: some atom
// of one excludes some atom of the other.
func (o *oracle) disjoint(c1, c2 conj) bool {
	for _, a := range c1 {
		for _, b := range c2 {
			if o.atomsDisjoint(a, b) {
				return true
			}
		}
	}
	return false
}

// atomsSame says whether a and b match the same requests.
func (o *oracle) atomsSame(a, b atom) bool {
	if a.key == b.key {
		return true
	}
	if a.kind == 0 || b.kind == 0 {
		return false
	}
	k := a.key + "\x00" + b.key
	if v, ok := o.same[k]; ok {
		return v
	}
	if o.apart(a, b) || o.notWithin(a, b) || o.notWithin(b, a) {
		o.same[k] = false
		return false
	}
	v := false
	if x, y := o.lang(a), o.lang(b); x != nil && y != nil {
		eq, err := sameLang(x, y)
		v = err == nil && eq
	}
	o.same[k] = v
	return v
}

// sameConj says whether two conjunctions match the same requests because
// their atoms pair off one to one as atomsSame.
func (o *oracle) sameConj(c1, c2 conj) bool {
	if len(c1) != len(c2) {
		return false
	}
	used := make([]bool, len(c2))
	for _, a := range c1 {
		found := false
		for j, b := range c2 {
			if !used[j] && o.atomsSame(a, b) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// implies says whether every request b matches, a matches: the same
// filter, a subpath containing a path, or (path sets decided) b's paths
// among a's.
func (o *oracle) implies(b, a atom) bool {
	if implies(b, a) {
		return true
	}
	if a.kind == 0 || b.kind == 0 || (a.kind != 'r' && b.kind != 'r') {
		return false
	}
	k := b.key + "\x00" + a.key
	if v, ok := o.sub[k]; ok {
		return v
	}
	if o.apart(a, b) {
		o.sub[k] = false
		return false
	}
	if o.notWithin(b, a) {
		o.sub[k] = false
		return false
	}
	v := false
	if x, y := o.lang(b), o.lang(a); x != nil && y != nil {
		in, err := subLang(x, y)
		v = err == nil && in
	}
	o.sub[k] = v
	return v
}

// covers says whether every request c2 matches, c1 matches: each atom of
// c1 is implied by an atom of c2.
func (o *oracle) covers(c1, c2 conj) bool {
	for _, a := range c1 {
		ok := false
		for _, b := range c2 {
			if o.implies(b, a) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (o *oracle) witnesses(a atom) []string {
	w, ok := o.wits[a.key]
	if !ok {
		w = witnesses(a)
		o.wits[a.key] = w
	}
	return w
}

// notWithin says a witness of x is not matched by y: x is not within y.
func (o *oracle) notWithin(x, y atom) bool {
	for _, w := range o.witnesses(x) {
		if m, ok := o.m.match(y, w); ok && !m {
			return true
		}
	}
	return false
}

// meet says a witness of one is matched by both: they are not disjoint.
// Besides each one's witnesses it tries each witness of one continued by
// what a witness of the other has after their common directory
// ("/p/.a" and "/p/.b" give "/p/.a/.b"): patterns that cover what is
// beneath a name meet there.
func (o *oracle) meet(x, y atom) bool {
	wx, wy := o.witnesses(x), o.witnesses(y)
	cands := append(append([]string(nil), wx...), wy...)
	for _, a := range wx {
		for _, b := range wy {
			cands = append(cands, a+"/"+afterCommonDir(a, b), b+"/"+afterCommonDir(b, a))
		}
	}
	for _, w := range cands {
		mx, okx := o.m.match(x, w)
		my, oky := o.m.match(y, w)
		if okx && oky && mx && my {
			return true
		}
	}
	return false
}

// afterCommonDir is what b has after the directory it shares with a.
func afterCommonDir(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := strings.LastIndexByte(b[:i], '/')
	return b[j+1:]
}
