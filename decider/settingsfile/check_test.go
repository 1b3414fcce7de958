package settingsfile

import (
	"reflect"
	"strings"
	"testing"
)

// mustValue decodes one JSON value for a checker test.
func mustValue(t *testing.T, doc string) *Value {
	t.Helper()
	v, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return v
}

func issueStrings(c *Checker) []string {
	out := []string{}
	for _, is := range c.Issues {
		out = append(out, is.String())
	}
	return out
}

// TestCheckers runs each checker helper on one value at the path "k" and
// compares what it reports, and whether it says the value is usable.
func TestCheckers(t *testing.T) {
	at := Path{"k"}
	type run func(c *Checker, v *Value) bool
	str := func(c *Checker, v *Value) bool { _, ok := c.Str(at, v); return ok }
	nonEmpty := func(c *Checker, v *Value) bool { _, ok := c.NonEmptyStr(at, v); return ok }
	boolean := func(c *Checker, v *Value) bool { _, ok := c.Boolean(at, v); return ok }
	port := func(c *Checker, v *Value) bool { _, ok := c.Integer(at, v, 1, 65535); return ok }
	strs := func(c *Checker, v *Value) bool { _, ok := c.Strings(at, v, false); return ok }
	nonEmptyStrs := func(c *Checker, v *Value) bool { _, ok := c.Strings(at, v, true); return ok }
	enum := func(c *Checker, v *Value) bool { _, ok := c.Enum(at, v, "deny", "mask"); return ok }
	record := func(c *Checker, v *Value) bool {
		return c.Record(at, v, func(p Path, v *Value) { c.NonEmptyStr(p, v) })
	}

	tests := []struct {
		name   string
		check  run
		doc    string
		ok     bool
		issues []string
	}{
		{"str ok", str, `"x"`, true, nil},
		{"str empty ok", str, `""`, true, nil},
		{"str number", str, `1`, false, []string{"k: Expected string, received number"}},
		{"str null", str, `null`, false, []string{"k: Expected string, received null"}},
		{"str object", str, `{}`, false, []string{"k: Expected string, received object"}},
		{"nonEmpty ok", nonEmpty, `"x"`, true, nil},
		{"nonEmpty empty", nonEmpty, `""`, false, []string{"k: String must contain at least 1 character(s)"}},
		{"nonEmpty array", nonEmpty, `[]`, false, []string{"k: Expected string, received array"}},
		{"boolean ok", boolean, `false`, true, nil},
		{"boolean string", boolean, `"true"`, false, []string{"k: Expected boolean, received string"}},
		{"integer ok", port, `443`, true, nil},
		{"integer written as float", port, `443.0`, true, nil},
		{"integer exponent", port, `4.43e2`, true, nil},
		{"integer bounds", port, `65535`, true, nil},
		{"integer string", port, `"443"`, false, []string{"k: Expected number, received string"}},
		{"integer fraction", port, `443.5`, false, []string{"k: Expected integer, received float"}},
		{"integer fraction below min", port, `0.5`, false, []string{"k: Expected integer, received float", "k: Number must be greater than or equal to 1"}},
		{"integer below min", port, `0`, false, []string{"k: Number must be greater than or equal to 1"}},
		{"integer negative", port, `-1`, false, []string{"k: Number must be greater than or equal to 1"}},
		{"integer above max", port, `65536`, false, []string{"k: Number must be less than or equal to 65535"}},
		{"integer overflow", port, `1e400`, false, []string{"k: Expected integer, received float", "k: Number must be less than or equal to 65535"}},
		{"integer negative overflow", port, `-1e400`, false, []string{"k: Expected integer, received float", "k: Number must be greater than or equal to 1"}},
		{"strings ok", strs, `["a", ""]`, true, nil},
		{"strings not array", strs, `"a"`, false, []string{"k: Expected array, received string"}},
		{"strings bad items", strs, `["a", 1, null]`, false, []string{"k.1: Expected string, received number", "k.2: Expected string, received null"}},
		{"non-empty strings", nonEmptyStrs, `["a", ""]`, false, []string{"k.1: String must contain at least 1 character(s)"}},
		{"enum ok", enum, `"mask"`, true, nil},
		{"enum other", enum, `"hide"`, false, []string{"k: Invalid enum value. Expected 'deny' | 'mask', received 'hide'"}},
		{"enum case", enum, `"Deny"`, false, []string{"k: Invalid enum value. Expected 'deny' | 'mask', received 'Deny'"}},
		{"enum not a string", enum, `true`, false, []string{"k: Expected 'deny' | 'mask', received boolean"}},
		{"record ok", record, `{"a": "x", "b.c": "y"}`, true, nil},
		{"record values checked", record, `{"a": "", "b.c": 1}`, true, []string{"k.a: String must contain at least 1 character(s)", "k.b.c: Expected string, received number"}},
		{"record not object", record, `[]`, false, []string{"k: Expected object, received array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Checker{}
			ok := tt.check(c, mustValue(t, tt.doc))
			got := issueStrings(c)
			want := tt.issues
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("issues\n got: %q\nwant: %q", got, want)
			}
			if ok != tt.ok {
				t.Errorf("usable = %v, want %v", ok, tt.ok)
			}
		})
	}
}

// TestObject covers the object walk: file order, required keys, unknown
// keys with their hint, and keys that are accepted but ignored on Linux.
func TestObject(t *testing.T) {
	fields := func(c *Checker) []Field {
		return []Field{
			{Name: "allowedDomains", Required: true, Check: func(p Path, v *Value) { c.Strings(p, v, false) }},
			{Name: "deniedDomains", Required: true, Check: func(p Path, v *Value) { c.Strings(p, v, false) }},
			{Name: "allowPty", Ignored: "macOS only", Check: func(p Path, v *Value) { c.Boolean(p, v) }},
		}
	}
	const unknown = "unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule"
	tests := []struct {
		name    string
		doc     string
		ok      bool
		issues  []string
		ignored []string
	}{
		{"complete", `{"allowedDomains": [], "deniedDomains": []}`, true, []string{}, nil},
		{"missing both", `{}`, true, []string{"n.allowedDomains: Required", "n.deniedDomains: Required"}, nil},
		{"file order, then required", `{"allowPty": 1, "allowedDomains": 2}`, true, []string{
			"n.allowPty: Expected boolean, received number",
			"n.allowedDomains: Expected array, received number",
			"n.deniedDomains: Required"}, []string{"n.allowPty (macOS only)"}},
		{"hint for a typo", `{"allowedDomain": [], "deniedDomains": [], "allowedDomains": []}`, true, []string{
			"n.allowedDomain: " + unknown + `; did you mean "allowedDomains"?`}, nil},
		{"hint ignores case", `{"AllowPTY": true, "allowedDomains": [], "deniedDomains": []}`, true, []string{
			"n.AllowPTY: " + unknown + `; did you mean "allowPty"?`}, nil},
		{"no hint when far", `{"proxy": true, "allowedDomains": [], "deniedDomains": []}`, true, []string{"n.proxy: " + unknown}, nil},
		{"null is not an object", `null`, false, []string{"n: Expected object, received null"}, nil},
		{"ignored key recorded", `{"allowPty": true, "allowedDomains": [], "deniedDomains": []}`, true, []string{}, []string{"n.allowPty (macOS only)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Checker{}
			ok := c.Object(Path{"n"}, mustValue(t, tt.doc), fields(c))
			if got := issueStrings(c); !reflect.DeepEqual(got, tt.issues) {
				t.Errorf("issues\n got: %q\nwant: %q", got, tt.issues)
			}
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if !reflect.DeepEqual(c.Ignored, tt.ignored) {
				t.Errorf("ignored = %q, want %q", c.Ignored, tt.ignored)
			}
		})
	}
	t.Run("absent object", func(t *testing.T) {
		c := &Checker{}
		if c.Object(Path{"n"}, nil, nil) {
			t.Error("a missing object is usable")
		}
		if got := issueStrings(c); !reflect.DeepEqual(got, []string{"n: Required"}) {
			t.Errorf("issues = %q", got)
		}
	})
}

func TestPathString(t *testing.T) {
	tests := []struct {
		p    Path
		want string
	}{
		{nil, "(root)"},
		{Path{"network"}, "network"},
		{Path{"network", "allowedDomains"}.Idx(3), "network.allowedDomains.3"},
		{Path{"ignoreViolations", "git push"}, "ignoreViolations.git push"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
	// key and idx never share the receiver's backing array.
	base := make(Path, 1, 4)
	base[0] = "a"
	x, y := base.Key("x"), base.Key("y")
	if x.String() != "a.x" || y.String() != "a.y" {
		t.Errorf("sibling paths alias: %s, %s", x, y)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"network", "network", 0},
		{"netwrok", "network", 2},
		{"denyReads", "denyRead", 1},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestParse covers the strict decoder under the checkers.
func TestParse(t *testing.T) {
	tests := []struct {
		name, doc string
		err       string // substring; "" means success
	}{
		{"object", `{"a": [1, "x", true, null, {}]}`, ""},
		{"keys keep file order", `{"b": 1, "a": 2}`, ""},
		{"duplicate key", `{"a": 1, "a": 2}`, `duplicate key "a"`},
		{"duplicate nested key", `{"a": {"b": 1, "c": 2, "b": 3}}`, `duplicate key "b"`},
		{"same key in sibling objects", `{"a": {"k": 1}, "b": {"k": 2}}`, ""},
		{"trailing data", `{} {}`, "unexpected data after the top-level value"},
		{"truncated", `{"a": [`, "unexpected end of JSON input"},
		{"empty", ``, "unexpected end of JSON input"},
		{"trailing comma", `{"a": 1,}`, "invalid character '}'"},
		{"comment", `{"a": 1 /* x */}`, "invalid character '/'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse([]byte(tt.doc))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.err)
			}
			if tt.name == "keys keep file order" && (v.Obj[0].Key != "b" || v.Obj[1].Key != "a") {
				t.Errorf("keys out of file order: %v", v.Obj)
			}
		})
	}
}
