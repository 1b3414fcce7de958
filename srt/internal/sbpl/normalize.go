package sbpl

import (
	"fmt"
	"sort"
	"strings"
)

// Entry is one normalised rule: Action on the leaf operation Op when
// Filter holds, at precedence Layer.
type Entry struct {
	// Layer counts the runs of alternating actions from the end of the
	// operation's rules: 0 is the last run (it wins), 1 the run before it.
	Layer  int
	Action string
	// Op is a leaf operation: a name that is no wildcard, or a wildcard
	// (file-read*, default) standing for the operations beneath it that
	// neither profile names.
	Op string
	// Filter is the conjunction as written ("" for always), Key its
	// comparison form.
	Filter, Key string
	// Mods are the (with …) modifiers that count: all of a deny's, an
	// allow's except (with message …), which only a denial reports.
	Mods string
	// From is the operation name the rule was written with.
	From string

	conj conj
}

// String prints the entry without its layer: what an allow-list names.
func (e Entry) String() string {
	s := e.Action + " " + e.Op
	if e.Filter != "" {
		s += " " + e.Filter
	}
	if e.Mods != "" {
		s += " " + e.Mods
	}
	return s
}

func (e Entry) id() string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s", e.Layer, e.Action, e.Op, e.Key, e.Mods)
}

// aliases are operation names without "*" that Seatbelt treats as the
// wildcard over their family.
var aliases = map[string]string{"ipc-posix-shm": "ipc-posix-shm*", "ipc-posix-sem": "ipc-posix-sem*", "default": "*"}

// opBase is the family an operation names: "file-read" and true for
// file-read*, "" and true for default, the name and false for a leaf.
func opBase(op string) (string, bool) {
	if a, ok := aliases[op]; ok {
		op = a
	}
	if strings.HasSuffix(op, "*") {
		return strings.TrimSuffix(op, "*"), true
	}
	return op, false
}

// opCovers says whether a rule written for op applies to leaf.
func opCovers(op, leaf string) bool {
	ob, ow := opBase(op)
	lb, lw := opBase(leaf)
	if !ow {
		return !lw && ob == lb
	}
	return ob == "" || lb == ob || strings.HasPrefix(lb, ob+"-")
}

// Leaves lists the leaf operations of the given profiles: every operation
// any rule names, wildcards included (each standing for the operations
// beneath it that are not named).
func Leaves(ps ...*Profile) []string {
	seen := map[string]bool{}
	for _, p := range ps {
		for _, r := range p.Rules {
			for _, op := range r.Ops {
				seen[op] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for op := range seen {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// maxEntries bounds the work of one normalisation.
const maxEntries = 20000

// Normalize turns p into its sorted normalised entries over the given
// leaf operations (Leaves of every profile it is compared with).
func Normalize(p *Profile, leaves []string) ([]Entry, error) {
	return normalize(p, leaves, newOracle())
}

func normalize(p *Profile, leaves []string, o *oracle) ([]Entry, error) {
	type cand struct {
		action, from, mods string
		c                  conj
	}
	// The rules' filters in normal form, once.
	type nrule struct {
		r     Rule
		terms []conj
		mods  string
	}
	var rules []nrule
	total := 0
	for _, r := range p.Rules {
		nr := nrule{r: r, mods: modsKey(r)}
		if len(r.Filters) == 0 {
			nr.terms = []conj{nil}
		}
		for _, f := range r.Filters {
			d, err := dnf(f)
			if err != nil {
				return nil, err
			}
			nr.terms = append(nr.terms, d...)
			if len(nr.terms) > maxTerms {
				return nil, fmt.Errorf("sbpl: offset %d: rule expands to more than %d alternatives", r.Pos, maxTerms)
			}
		}
		total += len(nr.terms) * len(r.Ops)
		if total > maxEntries {
			return nil, fmt.Errorf("sbpl: profile expands to more than %d rules", maxEntries)
		}
		rules = append(rules, nr)
	}
	var out []Entry
	work := 0
	for _, leaf := range leaves {
		var seq []cand
		for _, nr := range rules {
			for _, op := range nr.r.Ops {
				if !opCovers(op, leaf) {
					continue
				}
				for _, t := range nr.terms {
					if !o.disjoint(t, t) {
						seq = append(seq, cand{nr.r.Action, op, nr.mods, t})
					}
				}
				break
			}
		}
		if work += len(seq); work > maxEntries {
			return nil, fmt.Errorf("sbpl: profile expands to more than %d rules over its %d operations", maxEntries, len(leaves))
		}
		// A rule is dead when a later rule (either action) matches all it
		// matches: the later one is always the last match.
		var live []cand
		for i := len(seq) - 1; i >= 0; i-- {
			dead := false
			for _, l := range live {
				if o.covers(l.c, seq[i].c) {
					dead = true
					break
				}
			}
			if !dead {
				live = append(live, seq[i])
			}
		}
		// live is in reverse order. A rule is also redundant when the
		// rules before it already decide what it matches the same way:
		// going back from it, past rules that match nothing in common with
		// it and rules with its action and modifiers, to a rule with its
		// action and modifiers that matches all it matches; a rule of the
		// other action (or other modifiers) that may match a common
		// request stops the search.
		kept := live[:0:0]
		for i := len(live) - 1; i >= 0; i-- {
			r := live[i]
			shadowed := false
			for j := len(kept) - 1; j >= 0; j-- {
				e := kept[j]
				if o.disjoint(e.c, r.c) {
					continue
				}
				if e.action != r.action || e.mods != r.mods {
					break
				}
				// What e matches of r it decides as r would; the rest
				// falls to the rules before e.
				if o.covers(e.c, r.c) {
					shadowed = true
					break
				}
			}
			if !shadowed {
				kept = append(kept, r)
			}
		}
		live = live[:0]
		for i := len(kept) - 1; i >= 0; i-- {
			live = append(live, kept[i])
		}
		// live is in reverse order. Two rules commute (swapping them
		// changes no decision) when no request matches both, or when they
		// have the same action and modifiers; the layer of a rule is the
		// longest chain of rules after it that do not commute with it, one
		// by one (0: nothing after it can override it). The layers are the
		// Foata normal form of the sequence under those swaps: the same for
		// every order the swaps reach.
		layers := make([]int, len(live))
		for i, e := range live {
			for j := 0; j < i; j++ {
				if (live[j].action != e.action || live[j].mods != e.mods) && layers[j]+1 > layers[i] && !o.disjoint(live[j].c, e.c) {
					layers[i] = layers[j] + 1
				}
			}
		}
		for i, e := range live {
			// Within a layer, a rule covered by another of the layer with
			// its action and modifiers adds nothing.
			redundant := false
			for j, f := range live {
				if j != i && layers[j] == layers[i] && f.action == e.action && f.mods == e.mods && o.covers(f.c, e.c) && (!o.covers(e.c, f.c) || j < i) {
					redundant = true
					break
				}
			}
			if redundant {
				continue
			}
			out = append(out, Entry{Layer: layers[i], Action: e.action, Op: leaf, Filter: e.c.text(), Key: e.c.key(), Mods: e.mods, From: e.from, conj: e.c})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id() < out[j].id() })
	return out, nil
}

// modsKey renders the modifiers that count for r, sorted.
func modsKey(r Rule) string {
	var ms []string
	for _, m := range r.Modifiers {
		if r.Action == "allow" && len(m.Items) > 1 && m.Items[1].Kind == Symbol && m.Items[1].Text == "message" {
			continue
		}
		ms = append(ms, Render(m))
	}
	sort.Strings(ms)
	return strings.Join(compactStrings(ms), " ")
}

// Diff compares two normalised rule sets: the entries only in a and only
// in b.
func Diff(a, b []Entry) (onlyA, onlyB []Entry) {
	return diff(a, b, newOracle())
}

func diff(a, b []Entry, o *oracle) (onlyA, onlyB []Entry) {
	in := func(es []Entry) map[string]bool {
		m := make(map[string]bool, len(es))
		for _, e := range es {
			m[e.id()] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	for _, e := range a {
		if !mb[e.id()] {
			onlyA = append(onlyA, e)
		}
	}
	for _, e := range b {
		if !ma[e.id()] {
			onlyB = append(onlyB, e)
		}
	}
	// Entries whose filters are spelled differently but match the same
	// paths (regexes with the same language, a regex and a literal) pair
	// off.
	pairedB := make([]bool, len(onlyB))
	var restA []Entry
	for _, x := range onlyA {
		paired := false
		for j, y := range onlyB {
			if !pairedB[j] && x.Layer == y.Layer && x.Action == y.Action && x.Op == y.Op && x.Mods == y.Mods && o.sameConj(x.conj, y.conj) {
				pairedB[j], paired = true, true
				break
			}
		}
		if !paired {
			restA = append(restA, x)
		}
	}
	var restB []Entry
	for j, y := range onlyB {
		if !pairedB[j] {
			restB = append(restB, y)
		}
	}
	return restA, restB
}

// Compare parses and normalises two profiles over their common leaves
// and diffs them.
func Compare(a, b string) (onlyA, onlyB []Entry, err error) {
	pa, err := Parse(a)
	if err != nil {
		return nil, nil, fmt.Errorf("first profile: %w", err)
	}
	pb, err := Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("second profile: %w", err)
	}
	leaves := Leaves(pa, pb)
	o := newOracle()
	na, err := normalize(pa, leaves, o)
	if err != nil {
		return nil, nil, fmt.Errorf("first profile: %w", err)
	}
	nb, err := normalize(pb, leaves, o)
	if err != nil {
		return nil, nil, fmt.Errorf("second profile: %w", err)
	}
	onlyA, onlyB = diff(na, nb, o)
	return onlyA, onlyB, nil
}
