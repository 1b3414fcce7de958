package settingsfile

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Issue is one problem found in a settings file.
type Issue struct {
	// Path is the dotted path of the offending field ("(root)" for the
	// whole file), as the reference prints it.
	Path    string
	Message string
}

func (i Issue) String() string { return i.Path + ": " + i.Message }

// ErrInvalid is matched (errors.Is) by every error that means a settings
// file cannot be used.
var ErrInvalid = errors.New("invalid settings")

// InvalidError lists every problem in a settings document. Its Error is
// what follows the file's name in the message.
type InvalidError struct {
	Issues []Issue
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return "does not hold a valid config — " + strings.Join(parts, "; ")
}

// Is makes every InvalidError match ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Path is a location in the file, one element per object key or array index.
type Path []string

// Key is the path of the member k of the object at p.
func (p Path) Key(k string) Path { return append(append(Path{}, p...), k) }

// Idx is the path of the element i of the array at p.
func (p Path) Idx(i int) Path { return p.Key(strconv.Itoa(i)) }

func (p Path) String() string {
	if len(p) == 0 {
		return "(root)"
	}
	return strings.Join(p, ".")
}

// Checker collects issues; every check records what it finds and returns
// whether the value can be used.
type Checker struct {
	Issues []Issue
	// Ignored lists the keys Object accepted with Field.Ignored set, as
	// "<path> (<why>)".
	Ignored []string
	// Hints names, by lower-cased key, where a key belongs that is unknown
	// where it is written ("alloweddomains" → "network.allowedDomains"),
	// for the hint of its refusal. Learn, when set, collects the keys of
	// the objects one level below the root so: a checker run over a file
	// of empty sections learns the Hints of the others.
	Hints, Learn map[string]string
}

// Add records an issue at p.
func (c *Checker) Add(p Path, format string, args ...any) {
	c.Issues = append(c.Issues, Issue{Path: p.String(), Message: fmt.Sprintf(format, args...)})
}

// The messages below are the reference's (zod's) wording, so that a file that
// fails there fails here with the same text.

// TypeIs checks that v is of kind want.
func (c *Checker) TypeIs(p Path, v *Value, want Kind) bool {
	if v.Kind == want {
		return true
	}
	c.Add(p, "Expected %s, received %s", want, v.Kind)
	return false
}

// Str checks a string.
func (c *Checker) Str(p Path, v *Value) (string, bool) {
	if !c.TypeIs(p, v, String) {
		return "", false
	}
	return v.Str, true
}

// NonEmptyStr checks a string of one character or more.
func (c *Checker) NonEmptyStr(p Path, v *Value) (string, bool) {
	s, ok := c.Str(p, v)
	if ok && s == "" {
		c.Add(p, "String must contain at least 1 character(s)")
		return "", false
	}
	return s, ok
}

// Boolean checks a boolean.
func (c *Checker) Boolean(p Path, v *Value) (bool, bool) {
	if !c.TypeIs(p, v, Bool) {
		return false, false
	}
	return v.Bool, true
}

// Integer checks an integer from min to max.
func (c *Checker) Integer(p Path, v *Value, min, max int64) (int, bool) {
	if !c.TypeIs(p, v, Number) {
		return 0, false
	}
	// Like zod, every check runs and reports: 0.5 for a minimum of 1 is
	// both not an integer and too small. A literal too large for a float64
	// is ±Inf, as JSON.parse reads it: not an integer, and out of range.
	f, err := v.Num.Float64()
	if err != nil && !math.IsInf(f, 0) {
		c.Add(p, "Expected number, received %s", v.Num)
		return 0, false
	}
	ok := true
	if math.IsInf(f, 0) || f != math.Trunc(f) {
		c.Add(p, "Expected integer, received float")
		ok = false
	}
	if f < float64(min) {
		c.Add(p, "Number must be greater than or equal to %d", min)
		ok = false
	}
	if f > float64(max) {
		c.Add(p, "Number must be less than or equal to %d", max)
		ok = false
	}
	if !ok {
		return 0, false
	}
	return int(f), true
}

// Array checks an array.
func (c *Checker) Array(p Path, v *Value) ([]*Value, bool) {
	if !c.TypeIs(p, v, Array) {
		return nil, false
	}
	return v.Arr, true
}

// Strings checks an array of strings, each non-empty if nonEmpty.
func (c *Checker) Strings(p Path, v *Value, nonEmpty bool) ([]string, bool) {
	arr, ok := c.Array(p, v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		var s string
		var ok2 bool
		if nonEmpty {
			s, ok2 = c.NonEmptyStr(p.Idx(i), e)
		} else {
			s, ok2 = c.Str(p.Idx(i), e)
		}
		ok = ok && ok2
		out = append(out, s)
	}
	return out, ok
}

// Enum checks a string that is one of options.
func (c *Checker) Enum(p Path, v *Value, options ...string) (string, bool) {
	want := "'" + strings.Join(options, "' | '") + "'"
	if v.Kind != String {
		c.Add(p, "Expected %s, received %s", want, v.Kind)
		return "", false
	}
	for _, o := range options {
		if v.Str == o {
			return v.Str, true
		}
	}
	c.Add(p, "Invalid enum value. Expected %s, received '%s'", want, v.Str)
	return "", false
}

// Record checks a record<string, T> whose values are checked by each.
func (c *Checker) Record(p Path, v *Value, each func(p Path, v *Value)) bool {
	if !c.TypeIs(p, v, Object) {
		return false
	}
	for _, m := range v.Obj {
		each(p.Key(m.Key), m.Val)
	}
	return true
}

// Field describes one key of an object.
type Field struct {
	Name     string
	Required bool
	// Ignored names the platform or helper program the key is for when it
	// has no effect on Linux. The value is still validated.
	Ignored string
	Check   func(p Path, v *Value)
}

// Object checks v against fields, in the order of the file, reports missing
// required keys and refuses unknown ones.
func (c *Checker) Object(p Path, v *Value, fields []Field) bool {
	if v == nil {
		c.Add(p, "Required")
		return false
	}
	if !c.TypeIs(p, v, Object) {
		return false
	}
	byName := map[string]Field{}
	for _, f := range fields {
		byName[f.Name] = f
		if c.Learn != nil && len(p) == 1 {
			c.Learn[strings.ToLower(f.Name)] = p.Key(f.Name).String()
		}
	}
	for _, m := range v.Obj {
		f, ok := byName[m.Key]
		if !ok {
			c.unknownKey(p.Key(m.Key), fields)
			continue
		}
		if f.Ignored != "" {
			c.Ignored = append(c.Ignored, p.Key(m.Key).String()+" ("+f.Ignored+")")
		}
		f.Check(p.Key(m.Key), m.Val)
	}
	for _, f := range fields {
		if f.Required && v.Get(f.Name) == nil {
			c.Add(p.Key(f.Name), "Required")
		}
	}
	return true
}

func (c *Checker) unknownKey(p Path, fields []Field) {
	msg := "unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule"
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.Name)
	}
	best := closest(p[len(p)-1], names)
	// A key of a section (network.allowedDomains) written elsewhere, at
	// the top level say, is a likelier mistake than a misspelling; in its
	// own section in another case it is a misspelling there.
	if full, ok := c.Hints[strings.ToLower(p[len(p)-1])]; ok && !strings.EqualFold(full, p.String()) {
		best = full
	}
	if best != "" {
		msg += fmt.Sprintf(`; did you mean "%s"?`, best)
	}
	c.Add(p, "%s", msg)
}

// closest is the name of names nearest to name (ignoring case) within an
// edit distance of 3, for "did you mean" hints; "" when none is that near.
func closest(name string, names []string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	best, bestDist := "", 4
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
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

// ErrnoName is the errno of a failed file operation by its name ("EACCES"),
// as the reference says why it could not read a file; else err's text.
func ErrnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}
