package sbpl

import (
	"fmt"
	"regexp/syntax"
	"sort"
	"strings"
)

// atom is one filter that is not require-any/require-all, with its
// comparison key and its display text.
type atom struct {
	key, text string
	// kind is 's' for (subpath P), 'l' for (literal P), 'r' for (regex
	// P), 0 otherwise; path is P. Subpaths and literals take part in
	// coverage (a subpath covers what lies beneath it); all three in the
	// path-set questions of lang.go.
	kind byte
	path string
}

// conj is a conjunction of atoms, sorted by key, without repeats. The
// empty conjunction is "always".
type conj []atom

// maxTerms bounds the disjunctive normal form of one rule's filters.
const maxTerms = 1024

// dnf turns a filter into a disjunction of conjunctions.
func dnf(n *Node) ([]conj, error) {
	if n.Kind != List || len(n.Items) == 0 || n.Items[0].Kind != Symbol {
		return nil, fmt.Errorf("sbpl: offset %d: %s is not a filter", n.Pos, Render(n))
	}
	switch n.Items[0].Text {
	case "require-any":
		var out []conj
		for _, it := range n.Items[1:] {
			d, err := dnf(it)
			if err != nil {
				return nil, err
			}
			out = append(out, d...)
			if len(out) > maxTerms {
				return nil, fmt.Errorf("sbpl: offset %d: filter expands to more than %d alternatives", n.Pos, maxTerms)
			}
		}
		return out, nil
	case "require-all":
		out := []conj{nil}
		for _, it := range n.Items[1:] {
			d, err := dnf(it)
			if err != nil {
				return nil, err
			}
			if len(out)*len(d) > maxTerms {
				return nil, fmt.Errorf("sbpl: offset %d: filter expands to more than %d alternatives", n.Pos, maxTerms)
			}
			var next []conj
			for _, a := range out {
				for _, b := range d {
					next = append(next, merge(a, b))
				}
			}
			out = next
		}
		return out, nil
	case "require-not":
		if len(n.Items) != 2 {
			return nil, fmt.Errorf("sbpl: offset %d: (require-not …) takes one filter", n.Pos)
		}
		d, err := dnf(n.Items[1])
		if err != nil {
			return nil, err
		}
		return []conj{{{key: "(require-not " + disjKey(d) + ")", text: Render(n)}}}, nil
	}
	a := atom{key: keyOf(n, false), text: Render(n)}
	if len(n.Items) == 2 && n.Items[1].Kind != List && n.Items[1].Kind != Symbol {
		switch n.Items[0].Text {
		case "subpath":
			a.kind, a.path = 's', n.Items[1].Text
		case "literal":
			a.kind, a.path = 'l', n.Items[1].Text
		case "regex":
			a.kind, a.path = 'r', n.Items[1].Text
		}
	}
	return []conj{{a}}, nil
}

// merge is the conjunction of a and b.
func merge(a, b conj) conj {
	out := append(append(conj{}, a...), b...)
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	uniq := out[:0]
	for i, x := range out {
		if i == 0 || x.key != out[i-1].key {
			uniq = append(uniq, x)
		}
	}
	return uniq
}

func (c conj) key() string {
	keys := make([]string, len(c))
	for i, a := range c {
		keys[i] = a.key
	}
	return strings.Join(keys, " ")
}

func (c conj) text() string {
	switch len(c) {
	case 0:
		return ""
	case 1:
		return c[0].text
	}
	parts := make([]string, len(c))
	for i, a := range c {
		parts[i] = a.text
	}
	return "(require-all " + strings.Join(parts, " ") + ")"
}

func disjKey(d []conj) string {
	keys := make([]string, len(d))
	for i, c := range d {
		keys[i] = "(" + c.key() + ")"
	}
	sort.Strings(keys)
	keys = compactStrings(keys)
	return "(any " + strings.Join(keys, " ") + ")"
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// covers says whether every request c2 matches is matched by c1: each atom
// of c1 is implied by an atom of c2.
func (c1 conj) covers(c2 conj) bool {
	for _, a := range c1 {
		ok := false
		for _, b := range c2 {
			if implies(b, a) {
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

// implies says whether b matching means a matches.
func implies(b, a atom) bool {
	if a.key == b.key {
		return true
	}
	return a.kind == 's' && (b.kind == 's' || b.kind == 'l') && under(b.path, a.path)
}

// under says whether path p is root or lies beneath it.
func under(p, root string) bool {
	if !strings.HasPrefix(root, "/") || !strings.HasPrefix(p, "/") {
		return false
	}
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// keyOf renders a datum for comparison: strings Go-quoted, regex arguments
// as their canonical form.
func keyOf(n *Node, inRegex bool) string {
	switch n.Kind {
	case Symbol:
		return n.Text
	case String, Regex:
		if inRegex {
			return "#/" + canonicalRegex(n.Text) + "/"
		}
		return fmt.Sprintf("%q", n.Text)
	}
	re := inRegex || (len(n.Items) > 0 && n.Items[0].Kind == Symbol && isRegexFilter(n.Items[0].Text))
	parts := make([]string, len(n.Items))
	for i, it := range n.Items {
		parts[i] = keyOf(it, re)
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// canonicalRegex is a regular expression's text after Go's parser and
// simplifier: `[.]` and `\.`, or "\\." and #"\.", become one spelling.
// Seatbelt's engine reads POSIX extended expressions, which Go's syntax
// reads the same way for what profiles use (anchors, classes, groups,
// ?, *, +, |, escapes); "." matching newline is set to match POSIX. Text
// Go cannot parse is kept as it is, marked "raw:".
func canonicalRegex(s string) string {
	re, err := syntax.Parse(s, syntax.Perl|syntax.DotNL)
	if err != nil {
		return "raw:" + s
	}
	return re.Simplify().String()
}
