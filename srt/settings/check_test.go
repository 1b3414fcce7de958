package settings

import (
	"reflect"
	"strings"
	"testing"
)

// mustValue decodes one JSON value for a checker test.
func mustValue(t *testing.T, doc string) *value {
	t.Helper()
	v, err := parseJSON([]byte(doc))
	if err != nil {
		t.Fatalf("parseJSON(%s): %v", doc, err)
	}
	return v
}

func issueStrings(c *checker) []string {
	out := []string{}
	for _, is := range c.issues {
		out = append(out, is.String())
	}
	return out
}

// TestCheckers runs each checker helper on one value at the path "k" and
// compares what it reports, and whether it says the value is usable.
func TestCheckers(t *testing.T) {
	at := path{"k"}
	type run func(c *checker, v *value) bool
	str := func(c *checker, v *value) bool { _, ok := c.str(at, v); return ok }
	nonEmpty := func(c *checker, v *value) bool { _, ok := c.nonEmptyStr(at, v); return ok }
	boolean := func(c *checker, v *value) bool { _, ok := c.boolean(at, v); return ok }
	port := func(c *checker, v *value) bool { _, ok := c.integer(at, v, 1, 65535); return ok }
	strs := func(c *checker, v *value) bool { _, ok := c.strings(at, v, false); return ok }
	nonEmptyStrs := func(c *checker, v *value) bool { _, ok := c.strings(at, v, true); return ok }
	enum := func(c *checker, v *value) bool { _, ok := c.enum(at, v, "deny", "mask"); return ok }
	record := func(c *checker, v *value) bool {
		return c.record(at, v, func(p path, v *value) { c.nonEmptyStr(p, v) })
	}
	url := func(c *checker, v *value) bool { _, ok := c.url(at, v); return ok }
	abs := func(c *checker, v *value) bool { _, ok := c.absPath(at, v); return ok }
	env := func(c *checker, v *value) bool { _, ok := c.envName(at, v); return ok }
	uuid := func(c *checker, v *value) bool { n := len(c.issues); c.uuid(at, v); return len(c.issues) == n }
	portRange := func(c *checker, v *value) bool { n := len(c.issues); c.portRange(at, v); return len(c.issues) == n }
	mach := func(c *checker, v *value) bool { n := len(c.issues); c.machLookup(at, v); return len(c.issues) == n }
	entries := func(c *checker, v *value) bool { n := len(c.issues); c.pathEntries(at, v); return len(c.issues) == n }
	denyGlob := func(c *checker, v *value) bool { n := len(c.issues); c.denyGlob(at, v.str); return len(c.issues) == n }

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
		{"url http", url, `"http://proxy.example:3128"`, true, nil},
		{"url opaque", url, `"localhost:3128"`, true, nil},
		{"url no scheme", url, `"proxy.example"`, false, []string{"k: Invalid url"}},
		{"url scheme only", url, `"http://"`, false, []string{"k: Invalid url"}},
		{"url space", url, `"not a url"`, false, []string{"k: Invalid url"}},
		{"abs ok", abs, `"/usr/bin/bwrap"`, true, nil},
		{"abs relative", abs, `"bin/bwrap"`, false, []string{"k: Binary path must be absolute"}},
		{"abs empty", abs, `""`, false, []string{"k: Path cannot be empty", "k: Binary path must be absolute"}},
		{"env ok", env, `"_A1"`, true, nil},
		{"env digit first", env, `"1A"`, false, []string{"k: Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores"}},
		{"env dash", env, `"A-B"`, false, []string{"k: Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores"}},
		{"env empty", env, `""`, false, []string{"k: Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores"}},
		{"env flag-like", env, `"--unsetenv"`, false, []string{"k: Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores"}},
		{"uuid ok", uuid, `"7c5d4e0a-9b1f-4c3e-8a2d-1f0e9d8c7b6a"`, true, nil},
		{"uuid upper", uuid, `"7C5D4E0A-9B1F-4C3E-8A2D-1F0E9D8C7B6A"`, true, nil},
		{"uuid braces", uuid, `"{7c5d4e0a-9b1f-4c3e-8a2d-1f0e9d8c7b6a}"`, false, []string{"k: Invalid uuid"}},
		{"uuid dash misplaced", uuid, `"7c5d4e0a9-b1f-4c3e-8a2d-1f0e9d8c7b6a"`, false, []string{"k: Invalid uuid"}},
		{"uuid not hex", uuid, `"7c5d4e0a-9b1f-4c3e-8a2d-1f0e9d8c7b6g"`, false, []string{"k: Invalid uuid"}},
		{"port range ok", portRange, `[60080, 60089]`, true, nil},
		{"port range widest", portRange, `[60000, 60064]`, true, nil},
		{"port range single port", portRange, `[60080, 60080]`, true, nil},
		{"port range too wide", portRange, `[60000, 60065]`, false, []string{"k: low must be ≤ high and range width ≤ 64"}},
		{"port range reversed", portRange, `[60089, 60080]`, false, []string{"k: low must be ≤ high and range width ≤ 64"}},
		{"port range short", portRange, `[60080]`, false, []string{"k: Array must contain at least 2 element(s)"}},
		{"port range long", portRange, `[1, 2, 3]`, false, []string{"k: Array must contain at most 2 element(s)"}},
		{"port range bounds per item", portRange, `[0, 65536]`, false, []string{"k.0: Number must be greater than or equal to 1", "k.1: Number must be less than or equal to 65535", "k: low must be ≤ high and range width ≤ 64"}},
		{"port range types", portRange, `["60080", 60089]`, false, []string{"k.0: Expected number, received string"}},
		{"port range not array", portRange, `"60080-60089"`, false, []string{"k: Expected array, received string"}},
		{"mach lookup ok", mach, `["com.example.*", "*", "com.example.helper"]`, true, nil},
		{"mach lookup inner star", mach, `["com.*.x", "**", 5]`, false, []string{
			"k.2: Expected string, received number",
			`k.0: Wildcards are only allowed as a single trailing "*" (e.g., "com.example.*" or "*" for all services).`,
			`k.1: Wildcards are only allowed as a single trailing "*" (e.g., "com.example.*" or "*" for all services).`}},
		{"entries ok", entries, `["/a", {"path": "/b/**", "literal": true}]`, true, nil},
		{"entries empty string", entries, `[""]`, false, []string{"k.0: Path cannot be empty"}},
		{"entries literal false", entries, `[{"path": "/a", "literal": false}]`, false, []string{`k.0: Expected a path, or { "path": "<path>", "literal": true }`}},
		{"entries literal missing", entries, `[{"path": "/a"}]`, false, []string{`k.0: Expected a path, or { "path": "<path>", "literal": true }`}},
		{"entries literal string", entries, `[{"path": "/a", "literal": "true"}]`, false, []string{`k.0: Expected a path, or { "path": "<path>", "literal": true }`}},
		{"entries path number", entries, `[{"path": 1, "literal": true}]`, false, []string{`k.0: Expected a path, or { "path": "<path>", "literal": true }`}},
		{"entries number", entries, `[1]`, false, []string{`k.0: Expected a path, or { "path": "<path>", "literal": true }`}},
		{"entries extra key", entries, `[{"path": "/a", "literal": true, "b": 1, "c": 2}]`, false, []string{"k.0: Unrecognized key(s) in object: 'b', 'c'"}},
		{"entries empty literal path", entries, `[{"path": "", "literal": true}]`, false, []string{"k.0.path: Path cannot be empty"}},
		{"entries not array", entries, `{}`, false, []string{"k: Expected array, received object"}},
		{"deny glob rooted", denyGlob, `"/a/*/"`, false, []string{`k: Deny glob "/a/*/" ends in a separator, so as a pattern it can match no path. Write "/a/*", which is also read as the path of that name where it exists, or add a "**" segment to match at any depth.`}},
		{"deny glob home", denyGlob, `"~/?//"`, false, []string{`k: Deny glob "~/?//" ends in a separator, so as a pattern it can match no path. Write "~/?", which is also read as the path of that name where it exists, or add a "**" segment to match at any depth.`}},
		{"deny glob set", denyGlob, `"/w/[WIP]/"`, false, []string{`k: Deny glob "/w/[WIP]/" ends in a separator, so as a pattern it can match no path. Write "/w/[WIP]", which is also read as the path of that name where it exists, or add a "**" segment to match at any depth.`}},
		{"deny glob no set", denyGlob, `"/w/[user-id]/"`, true, nil},
		{"deny glob relative", denyGlob, `"build/*/"`, true, nil},
		{"deny glob no slash", denyGlob, `"/a/*"`, true, nil},
		{"deny not a glob", denyGlob, `"/a/b/"`, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{}
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
	fields := func(c *checker) []field {
		return []field{
			{name: "allowedDomains", required: true, check: func(p path, v *value) { c.strings(p, v, false) }},
			{name: "deniedDomains", required: true, check: func(p path, v *value) { c.strings(p, v, false) }},
			{name: "allowPty", ignored: "macOS only", check: func(p path, v *value) { c.boolean(p, v) }},
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
			c := &checker{}
			ok := c.object(path{"n"}, mustValue(t, tt.doc), fields(c))
			if got := issueStrings(c); !reflect.DeepEqual(got, tt.issues) {
				t.Errorf("issues\n got: %q\nwant: %q", got, tt.issues)
			}
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if !reflect.DeepEqual(c.ignored, tt.ignored) {
				t.Errorf("ignored = %q, want %q", c.ignored, tt.ignored)
			}
		})
	}
	t.Run("absent object", func(t *testing.T) {
		c := &checker{}
		if c.object(path{"n"}, nil, nil) {
			t.Error("a missing object is usable")
		}
		if got := issueStrings(c); !reflect.DeepEqual(got, []string{"n: Required"}) {
			t.Errorf("issues = %q", got)
		}
	})
}

func TestPathString(t *testing.T) {
	tests := []struct {
		p    path
		want string
	}{
		{nil, "(root)"},
		{path{"network"}, "network"},
		{path{"network", "allowedDomains"}.idx(3), "network.allowedDomains.3"},
		{path{"ignoreViolations", "git push"}, "ignoreViolations.git push"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
	// key and idx never share the receiver's backing array.
	base := make(path, 1, 4)
	base[0] = "a"
	x, y := base.key("x"), base.key("y")
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

// TestParseJSON covers the strict decoder under the checkers.
func TestParseJSON(t *testing.T) {
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
			v, err := parseJSON([]byte(tt.doc))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("parseJSON: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("parseJSON error = %v, want one containing %q", err, tt.err)
			}
			if tt.name == "keys keep file order" && (v.obj[0].key != "b" || v.obj[1].key != "a") {
				t.Errorf("keys out of file order: %v", v.obj)
			}
		})
	}
}
