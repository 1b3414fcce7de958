package settings

import (
	"reflect"
	"testing"

	"github.com/srt-sandbox/decider/settingsfile"
)

// mustValue decodes one JSON value for a checker test.
func mustValue(t *testing.T, doc string) *value {
	t.Helper()
	v, err := settingsfile.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return v
}

func issueStrings(c *checker) []string {
	out := []string{}
	for _, is := range c.Issues {
		out = append(out, is.String())
	}
	return out
}

// TestCheckers runs each of srt's own checker helpers on one value at the
// path "k" and compares what it reports, and whether it says the value is
// usable (the shared ones: decider/settingsfile's TestCheckers).
func TestCheckers(t *testing.T) {
	at := path{"k"}
	type run func(c *checker, v *value) bool
	url := func(c *checker, v *value) bool { _, ok := c.url(at, v); return ok }
	abs := func(c *checker, v *value) bool { _, ok := c.absPath(at, v); return ok }
	env := func(c *checker, v *value) bool { _, ok := c.envName(at, v); return ok }
	uuid := func(c *checker, v *value) bool { n := len(c.Issues); c.uuid(at, v); return len(c.Issues) == n }
	portRange := func(c *checker, v *value) bool { n := len(c.Issues); c.portRange(at, v); return len(c.Issues) == n }
	mach := func(c *checker, v *value) bool { n := len(c.Issues); c.machLookup(at, v); return len(c.Issues) == n }
	entries := func(c *checker, v *value) bool { n := len(c.Issues); c.pathEntries(at, v); return len(c.Issues) == n }
	denyGlob := func(c *checker, v *value) bool { n := len(c.Issues); c.denyGlob(at, v.Str); return len(c.Issues) == n }

	tests := []struct {
		name   string
		check  run
		doc    string
		ok     bool
		issues []string
	}{
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
