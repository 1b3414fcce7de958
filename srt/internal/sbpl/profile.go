package sbpl

import (
	"fmt"
	"strings"
)

// Profile is a parsed SBPL profile: its rules in source order and the
// top-level forms that are not rules.
type Profile struct {
	// Version is the argument of (version N), "" when absent.
	Version string
	// Rules are the (allow …) and (deny …) forms, in order.
	Rules []Rule
	// Other holds (import …), (debug …) and the like, rendered, in order.
	Other []string
}

// Rule is one (allow …) or (deny …) form as written.
type Rule struct {
	Action string // "allow" or "deny"
	Ops    []string
	// Filters are ORed: the rule applies when any matches; none means
	// always.
	Filters []*Node
	// Modifiers are the (with …) forms.
	Modifiers []*Node
	Pos       int
}

// topLevel lists the non-rule forms Parse keeps (rendered) and ignores for
// permissions. Anything else (define, if, macros) is refused: the
// normalisation would not know what it means.
var topLevel = map[string]bool{"import": true, "debug": true, "trace": true}

// Parse reads an SBPL profile.
func Parse(src string) (*Profile, error) {
	nodes, err := Read(src)
	if err != nil {
		return nil, err
	}
	p := &Profile{}
	for _, n := range nodes {
		if n.Kind != List || len(n.Items) == 0 || n.Items[0].Kind != Symbol {
			return nil, fmt.Errorf("sbpl: offset %d: a top-level form must be a list starting with a name, got %s", n.Pos, Render(n))
		}
		head := n.Items[0].Text
		switch {
		case head == "version":
			if len(n.Items) != 2 || n.Items[1].Kind != Symbol {
				return nil, fmt.Errorf("sbpl: offset %d: (version N) takes one number", n.Pos)
			}
			if p.Version != "" {
				return nil, fmt.Errorf("sbpl: offset %d: a second (version …)", n.Pos)
			}
			p.Version = n.Items[1].Text
		case head == "allow" || head == "deny":
			r, err := parseRule(n)
			if err != nil {
				return nil, err
			}
			p.Rules = append(p.Rules, r)
		case topLevel[head]:
			p.Other = append(p.Other, Render(n))
		default:
			return nil, fmt.Errorf("sbpl: offset %d: unsupported top-level form %q", n.Pos, head)
		}
	}
	return p, nil
}

func parseRule(n *Node) (Rule, error) {
	r := Rule{Action: n.Items[0].Text, Pos: n.Pos}
	for _, it := range n.Items[1:] {
		switch {
		case it.Kind == Symbol:
			if len(r.Filters) > 0 || len(r.Modifiers) > 0 {
				return r, fmt.Errorf("sbpl: offset %d: operation %q after a filter", it.Pos, it.Text)
			}
			r.Ops = append(r.Ops, it.Text)
		case it.Kind == List && len(it.Items) > 0 && it.Items[0].Kind == Symbol && it.Items[0].Text == "with":
			r.Modifiers = append(r.Modifiers, it)
		case it.Kind == List && len(it.Items) > 0 && it.Items[0].Kind == Symbol:
			if len(r.Modifiers) > 0 {
				return r, fmt.Errorf("sbpl: offset %d: filter after a (with …) modifier", it.Pos)
			}
			r.Filters = append(r.Filters, it)
		default:
			return r, fmt.Errorf("sbpl: offset %d: %s is neither an operation, a filter nor a modifier", it.Pos, Render(it))
		}
	}
	if len(r.Ops) == 0 {
		return r, fmt.Errorf("sbpl: offset %d: (%s …) names no operation", n.Pos, r.Action)
	}
	return r, nil
}

// Render prints a datum back as SBPL, strings with Go-style escapes.
func Render(n *Node) string {
	var b strings.Builder
	render(&b, n, false)
	return b.String()
}

// render writes n; inRegex says string arguments are regexes (they are
// printed as #"…" with their text when that reads back the same). A #"…"
// literal is a string like any other: outside a regex filter it prints
// as "…".
func render(b *strings.Builder, n *Node, inRegex bool) {
	switch n.Kind {
	case Symbol:
		b.WriteString(n.Text)
	case String, Regex:
		if inRegex && rawSafe(n.Text) {
			b.WriteString(`#"` + n.Text + `"`)
			return
		}
		b.WriteString(quote(n.Text))
	case List:
		b.WriteByte('(')
		re := inRegex || (len(n.Items) > 0 && n.Items[0].Kind == Symbol && isRegexFilter(n.Items[0].Text))
		for i, it := range n.Items {
			if i > 0 {
				b.WriteByte(' ')
			}
			render(b, it, re)
		}
		b.WriteByte(')')
	}
}

// isRegexFilter says whether a filter's string arguments are regular
// expressions (regex, path-regex, global-name-regex, …).
func isRegexFilter(name string) bool { return name == "regex" || strings.HasSuffix(name, "-regex") }

// quote writes s as an SBPL string: only \" and \\ are escaped, every
// other byte as itself, except control bytes as \xHH;.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x;`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rawSafe says whether text reads back unchanged as the body of a #"…"
// literal: no quote, and no backslash left without the byte it escapes.
func rawSafe(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			return false
		case '\\':
			if i+1 == len(text) || text[i+1] == '"' {
				return false
			}
			i++
		}
	}
	return true
}

// Format prints p back as SBPL, one form per line. Parsing the result
// gives the same rules.
func Format(p *Profile) string {
	var b strings.Builder
	if p.Version != "" {
		b.WriteString("(version " + p.Version + ")\n")
	}
	for _, o := range p.Other {
		b.WriteString(o + "\n")
	}
	for _, r := range p.Rules {
		b.WriteString("(" + r.Action)
		for _, op := range r.Ops {
			b.WriteString(" " + op)
		}
		for _, f := range r.Filters {
			b.WriteString(" " + Render(f))
		}
		for _, m := range r.Modifiers {
			b.WriteString(" " + Render(m))
		}
		b.WriteString(")\n")
	}
	return b.String()
}
