package sbpl

import "strings"

// oracle answers, with memory, the path-set questions normalisation and
// diffing ask about atoms (lang.go).
type oracle struct {
	langs map[string]*rx
	bad   map[string]bool
	disj  map[string]bool
	same  map[string]bool
}

func newOracle() *oracle {
	return &oracle{langs: map[string]*rx{}, bad: map[string]bool{}, disj: map[string]bool{}, same: map[string]bool{}}
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
