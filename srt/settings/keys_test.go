package settings

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Keys lists every top-level key the checker knows, in its order, and
// every key of the network block, and no other; each is one of those,
// or a deeper key that Keys says srt refuses for now.
func TestKeysAreTheCheckers(t *testing.T) {
	top, network := keysAt(t)
	var fields []string
	for _, f := range (&checker{}).topFields(Default(), nil) {
		fields = append(fields, f.Name)
	}
	if !reflect.DeepEqual(top, fields) {
		t.Errorf("Keys' top-level keys\n%q\nthe checker's\n%q", top, fields)
	}
	var known []string
	for _, p := range sectionKeys() {
		if k, ok := strings.CutPrefix(p, "network."); ok {
			known = append(known, k)
		}
	}
	slices.Sort(known)
	if sorted := slices.Sorted(slices.Values(network)); !reflect.DeepEqual(sorted, known) {
		t.Errorf("Keys' network keys\n%q\nthe checker's\n%q", sorted, known)
	}
	for _, k := range Keys {
		deep := strings.Count(k.Path, ".") > 0 && !strings.HasPrefix(k.Path, "network.") || strings.Count(k.Path, ".") > 1
		switch {
		case deep && k.NotYet == "":
			t.Errorf("%s: below the top level and the network block Keys lists only what srt refuses for now", k.Path)
		case deep && k.Ignored != "":
			t.Errorf("%s: Ignored is given only to the top level's and the network block's keys (withKeys)", k.Path)
		case (k.StartOnly != "") != (k.value != nil):
			t.Errorf("%s: a StartOnly key needs its value, and only it", k.Path)
		case k.StartOnly != "" && !strings.HasPrefix(k.Path, "network."):
			t.Errorf("%s: StartOnlyChanges compares network blocks", k.Path)
		}
	}
}

// keysAt are Keys' top-level keys and network keys (without "network."),
// in order.
func keysAt(t *testing.T) (top, network []string) {
	t.Helper()
	for _, k := range Keys {
		if !strings.Contains(k.Path, ".") {
			top = append(top, k.Path)
		} else if n, ok := strings.CutPrefix(k.Path, "network."); ok && !strings.Contains(n, ".") {
			network = append(network, n)
		}
	}
	return top, network
}

// Each key set to its example does what Keys says: refused for now with
// its message, or accepted, listed as ignored when Linux ignores it, and
// seen as a change of a start-only key by its reader alone.
func TestKeysDoWhatTheySay(t *testing.T) {
	base, err := Parse((&Key{Path: "network.strictAllowlist", Example: "false"}).ExampleFile())
	if err != nil {
		t.Fatal(err)
	}
	noExample := map[string]bool{"network": true, "filesystem": true, "network.filterRequest": true}
	for _, k := range Keys {
		file := k.ExampleFile()
		if file == nil {
			if !noExample[k.Path] {
				t.Errorf("%s: no Example", k.Path)
			}
			continue
		}
		cfg, err := Parse(file)
		if k.NotYet != "" {
			var ie *InvalidError
			want := strings.ReplaceAll(k.Path, "[]", ".0")
			if !errors.As(err, &ie) || len(ie.Issues) != 1 || ie.Issues[0].Path != want || ie.Issues[0].Message != k.NotYet {
				t.Errorf("%s: %s gives %v; want %s refused with %q", k.Path, file, err, want, k.NotYet)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s: %v", k.Path, file, err)
			continue
		}
		ignored := slices.Contains(cfg.Ignored, k.Path+" ("+k.Ignored+")")
		if ignored != (k.Ignored != "") || (k.Ignored == "" && len(cfg.Ignored) > 0) {
			t.Errorf("%s: ignored %q, want %q", k.Path, cfg.Ignored, k.Ignored)
		}
		for _, r := range []Reader{ReadByProxy, ReadBySRT} {
			var want []string
			if r == k.StartOnly {
				want = []string{k.Path}
			}
			if got := StartOnlyChanges(&base.Network, &cfg.Network, r); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: start-only changes for %s: %q, want %q", k.Path, r, got, want)
			}
		}
	}
}

// Every key of Keys is in shared/settings.schema.json, and the schema's
// top-level and network keys are all in Keys.
func TestKeysInTheSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "shared", "settings.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		if schemaAt(schema, schema, strings.Split(strings.ReplaceAll(k.Path, "[]", ".[]"), ".")) == nil {
			t.Errorf("%s: not in settings.schema.json", k.Path)
		}
	}
	top, network := keysAt(t)
	names := func(node map[string]any) []string {
		props, _ := node["properties"].(map[string]any)
		var out []string
		for k := range props {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(schema), slices.Sorted(slices.Values(top)); !reflect.DeepEqual(got, want) {
		t.Errorf("the schema's top-level keys\n%q\nKeys'\n%q", got, want)
	}
	if got, want := names(schemaAt(schema, schema, []string{"network"})), slices.Sorted(slices.Values(network)); !reflect.DeepEqual(got, want) {
		t.Errorf("the schema's network keys\n%q\nKeys'\n%q", got, want)
	}
}

// schemaAt is the schema of the value at segs below node ("[]": an
// array's elements), through $ref and the branches of allOf, anyOf and
// oneOf; nil when there is none.
func schemaAt(root, node map[string]any, segs []string) map[string]any {
	if ref, ok := node["$ref"].(string); ok {
		def, _ := root["$defs"].(map[string]any)
		target, _ := def[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if target == nil {
			return nil
		}
		node = target
	}
	if len(segs) == 0 {
		return node
	}
	var next map[string]any
	if segs[0] == "[]" {
		next, _ = node["items"].(map[string]any)
	} else if props, ok := node["properties"].(map[string]any); ok {
		next, _ = props[segs[0]].(map[string]any)
	}
	if next != nil {
		if found := schemaAt(root, next, segs[1:]); found != nil {
			return found
		}
	}
	for _, branch := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := node[branch].([]any)
		for _, b := range list {
			if b, ok := b.(map[string]any); ok {
				if found := schemaAt(root, b, segs); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

// Every key of Keys is in docs/settings.md, in its section, and the docs
// say what Keys says of it: "ignored", "refused for now", and, for the
// start-only keys, in a "Read once." paragraph, which names no other
// network key. Every key the top level's and the network block's tables
// name is in Keys.
func TestKeysInTheDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "settings.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, s := range strings.Split(string(b), "\n## ")[1:] {
		title, body, _ := strings.Cut(s, "\n")
		sections[strings.Trim(title, "`")] = body
	}
	sectionOf := func(path string) string {
		if !strings.Contains(path, ".") {
			return "Top level"
		}
		first, _, _ := strings.Cut(path, ".")
		return first
	}
	leafOf := func(path string) string {
		i := strings.LastIndexByte(path, '.')
		return strings.TrimSuffix(path[i+1:], "[]")
	}
	// linesOf are the lines of text that name key in backquotes: `key`,
	// `key.…` or `key: …`.
	linesOf := func(text, key string) []string {
		re := regexp.MustCompile("`" + regexp.QuoteMeta(key) + "[`.:]")
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if re.MatchString(l) {
				out = append(out, l)
			}
		}
		return out
	}
	// says reports whether one of lines says all of words.
	says := func(lines []string, words ...string) bool {
		return slices.ContainsFunc(lines, func(l string) bool {
			return !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(l, w) })
		})
	}
	readOnce := readOnceText(sections["network"])
	for _, k := range Keys {
		refused := []string{"refused for now"}
		if k.NotYetValue != "" {
			refused = append(refused, `"`+k.NotYetValue+`"`)
		}
		lines, leaf := linesOf(sections[sectionOf(k.Path)], leafOf(k.Path)), leafOf(k.Path)
		switch {
		case len(lines) == 0:
			t.Errorf("%s: docs/settings.md's section %q does not name `%s`", k.Path, sectionOf(k.Path), leaf)
		case k.Ignored != "" && !says(lines, "ignored"):
			t.Errorf("%s: docs/settings.md does not say it is ignored: %q", k.Path, lines)
		case k.NotYet != "" && !says(lines, refused...):
			t.Errorf("%s: docs/settings.md does not say it (%q) is refused for now: %q", k.Path, k.NotYetValue, lines)
		}
		if named := len(linesOf(readOnce, leaf)) > 0; strings.HasPrefix(k.Path, "network.") && named != (k.StartOnly != "") {
			t.Errorf("%s: named in a \"Read once.\" paragraph: %v; start-only: %q", k.Path, named, k.StartOnly)
		}
	}
	top, network := keysAt(t)
	for _, c := range []struct {
		section, first string
		keys           []string
	}{{"Top level", "network", top}, {"network", "allowedDomains", network}} {
		for _, name := range tableKeys(sections[c.section], c.first) {
			if !slices.Contains(c.keys, name) {
				t.Errorf("docs/settings.md's %s table names `%s`, which Keys does not list", c.section, name)
			}
		}
	}
}

// readOnceText is the text of the paragraphs and list items that start
// "**Read once.**".
func readOnceText(section string) string {
	var out []string
	for _, para := range regexp.MustCompile(`\n\s*\n|\n- `).Split(section, -1) {
		if strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(para), "- "), "**Read once.**") {
			out = append(out, para)
		}
	}
	return strings.Join(out, "\n")
}

// tableKeys are the keys the first cells of a table's rows name (`key`,
// `key.sub`: key), in order, for the table whose first row is first's.
func tableKeys(section, first string) []string {
	var table, rows []string
	for _, l := range append(strings.Split(section, "\n"), "") {
		if strings.HasPrefix(l, "| `") {
			rows = append(rows, l)
			continue
		}
		if len(rows) > 0 && strings.HasPrefix(rows[0], "| `"+first+"`") {
			table = rows
		}
		rows = nil
	}
	var keys []string
	name := regexp.MustCompile("`([A-Za-z]+)[`.]")
	for _, r := range table {
		cell, _, _ := strings.Cut(strings.TrimPrefix(r, "| "), " | ")
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			keys = append(keys, m[1])
		}
	}
	return keys
}
