package sbpl

import (
	"sort"
	"strings"
)

// Group is entries that differ only by their leaf operation: one rule of
// a profile as the diff shows it.
type Group struct {
	Layer               int
	Action, Filter, Key string
	Mods                string
	Ops                 []string // sorted
}

// String prints the group as "L<layer> <action> <op,op…> <filter> <mods>".
func (g Group) String() string {
	s := "L" + itoa(g.Layer) + " " + g.Action + " " + strings.Join(g.Ops, ",")
	if g.Filter != "" {
		s += " " + g.Filter
	}
	if g.Mods != "" {
		s += " " + g.Mods
	}
	return s
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// GroupEntries merges entries with the same layer, action, filter and
// modifiers, in a stable order.
func GroupEntries(es []Entry) []Group {
	idx := map[string]int{}
	var out []Group
	for _, e := range es {
		k := itoa(e.Layer) + "\x00" + e.Action + "\x00" + e.Key + "\x00" + e.Mods
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Layer: e.Layer, Action: e.Action, Filter: e.Filter, Key: e.Key, Mods: e.Mods})
		}
		out[i].Ops = append(out[i].Ops, e.Op)
	}
	for i := range out {
		sort.Strings(out[i].Ops)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Layer != out[j].Layer {
			return out[i].Layer < out[j].Layer
		}
		if out[i].Action != out[j].Action {
			return out[i].Action < out[j].Action
		}
		return out[i].Key < out[j].Key
	})
	return out
}
