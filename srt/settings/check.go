package settings

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Issue is one problem found in a settings file.
type Issue struct {
	// Path is the dotted path of the offending field ("(root)" for the
	// whole file), as the reference prints it.
	Path    string
	Message string
}

func (i Issue) String() string { return i.Path + ": " + i.Message }

// path is a location in the file, one element per object key or array index.
type path []string

func (p path) key(k string) path { return append(append(path{}, p...), k) }
func (p path) idx(i int) path    { return p.key(strconv.Itoa(i)) }

func (p path) String() string {
	if len(p) == 0 {
		return "(root)"
	}
	return strings.Join(p, ".")
}

// checker collects issues; every check records what it finds and returns
// whether the value can be used.
type checker struct {
	issues  []Issue
	ignored []string
}

func (c *checker) add(p path, format string, args ...any) {
	c.issues = append(c.issues, Issue{Path: p.String(), Message: fmt.Sprintf(format, args...)})
}

// The messages below are the reference's (zod's) wording, so that a file that
// fails there fails here with the same text.

func (c *checker) typeIs(p path, v *value, want kind) bool {
	if v.kind == want {
		return true
	}
	c.add(p, "Expected %s, received %s", want, v.kind)
	return false
}

func (c *checker) str(p path, v *value) (string, bool) {
	if !c.typeIs(p, v, kindString) {
		return "", false
	}
	return v.str, true
}

func (c *checker) nonEmptyStr(p path, v *value) (string, bool) {
	s, ok := c.str(p, v)
	if ok && s == "" {
		c.add(p, "String must contain at least 1 character(s)")
		return "", false
	}
	return s, ok
}

func (c *checker) boolean(p path, v *value) (bool, bool) {
	if !c.typeIs(p, v, kindBool) {
		return false, false
	}
	return v.boolean, true
}

func (c *checker) integer(p path, v *value, min, max int64) (int, bool) {
	if !c.typeIs(p, v, kindNumber) {
		return 0, false
	}
	// Like zod, every check runs and reports: 0.5 for a minimum of 1 is
	// both not an integer and too small. A literal too large for a float64
	// is ±Inf, as JSON.parse reads it: not an integer, and out of range.
	f, err := v.num.Float64()
	if err != nil && !math.IsInf(f, 0) {
		c.add(p, "Expected number, received %s", v.num)
		return 0, false
	}
	ok := true
	if math.IsInf(f, 0) || f != math.Trunc(f) {
		c.add(p, "Expected integer, received float")
		ok = false
	}
	if f < float64(min) {
		c.add(p, "Number must be greater than or equal to %d", min)
		ok = false
	}
	if f > float64(max) {
		c.add(p, "Number must be less than or equal to %d", max)
		ok = false
	}
	if !ok {
		return 0, false
	}
	return int(f), true
}

func (c *checker) array(p path, v *value) ([]*value, bool) {
	if !c.typeIs(p, v, kindArray) {
		return nil, false
	}
	return v.arr, true
}

func (c *checker) strings(p path, v *value, nonEmpty bool) ([]string, bool) {
	arr, ok := c.array(p, v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		var s string
		var ok2 bool
		if nonEmpty {
			s, ok2 = c.nonEmptyStr(p.idx(i), e)
		} else {
			s, ok2 = c.str(p.idx(i), e)
		}
		ok = ok && ok2
		out = append(out, s)
	}
	return out, ok
}

func (c *checker) enum(p path, v *value, options ...string) (string, bool) {
	want := "'" + strings.Join(options, "' | '") + "'"
	if v.kind != kindString {
		c.add(p, "Expected %s, received %s", want, v.kind)
		return "", false
	}
	for _, o := range options {
		if v.str == o {
			return v.str, true
		}
	}
	c.add(p, "Invalid enum value. Expected %s, received '%s'", want, v.str)
	return "", false
}

// stringRecord checks a record<string, T> whose values are checked by each.
func (c *checker) record(p path, v *value, each func(p path, v *value)) bool {
	if !c.typeIs(p, v, kindObject) {
		return false
	}
	for _, m := range v.obj {
		each(p.key(m.key), m.val)
	}
	return true
}

// field describes one key of an object.
type field struct {
	name     string
	required bool
	// ignored names the platform or helper program the key is for when it
	// has no effect on Linux. The value is still validated.
	ignored string
	check   func(p path, v *value)
}

// object checks v against fields, in the order of the file, reports missing
// required keys and refuses unknown ones.
func (c *checker) object(p path, v *value, fields []field) bool {
	if v == nil {
		c.add(p, "Required")
		return false
	}
	if !c.typeIs(p, v, kindObject) {
		return false
	}
	byName := map[string]field{}
	for _, f := range fields {
		byName[f.name] = f
	}
	for _, m := range v.obj {
		f, ok := byName[m.key]
		if !ok {
			c.unknownKey(p.key(m.key), fields)
			continue
		}
		if f.ignored != "" {
			c.ignored = append(c.ignored, p.key(m.key).String()+" ("+f.ignored+")")
		}
		f.check(p.key(m.key), m.val)
	}
	for _, f := range fields {
		if f.required && v.get(f.name) == nil {
			c.add(p.key(f.name), "Required")
		}
	}
	return true
}

func (c *checker) unknownKey(p path, fields []field) {
	msg := "unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule"
	name := p[len(p)-1]
	best, bestDist := "", 4
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.name)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(`; did you mean "%s"?`, best)
	}
	c.add(p, "%s", msg)
}

// editDistance is the Levenshtein distance, for "did you mean" hints.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
