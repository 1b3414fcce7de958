package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks Parse on arbitrary input, seeded with every example in
// shared/settings-examples:
//
//   - it does not panic, and returns either a Config or an *InvalidError /
//     *SyntaxError;
//   - an InvalidError lists at least one issue, and every issue path is
//     "(root)" or a dotted path of keys and indices that exists in the input
//     (for "Required", the object the key is missing from exists);
//   - the result is the same when parsed again;
//   - a file srt accepts is accepted by shared/settings.schema.json, so that
//     the schema never flags a file that works.
func FuzzParse(f *testing.F) {
	root := repoRoot(f)
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join(root, "shared", "settings-examples", dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"a":{"b.c":[{"d":1}]}}`, `{"ignoreViolations":{"a.b":[1]}}`} {
		f.Add([]byte(s))
	}
	schema := settingsSchema(f)

	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		cfg2, err2 := Parse(data)

		switch e := err.(type) {
		case nil:
			if cfg == nil {
				t.Fatal("Parse returned neither a Config nor an error")
			}
			if err2 != nil || !reflect.DeepEqual(cfg, cfg2) {
				t.Fatalf("not deterministic: a second Parse gave (%+v, %v)", cfg2, err2)
			}
			inst, jerr := decodeLikeJS(data)
			if jerr != nil {
				t.Fatalf("Parse accepted a document encoding/json refuses: %v", jerr)
			}
			if serr := schema.Validate(inst); serr != nil {
				t.Fatalf("the schema refuses a file srt accepts:\n%s\n%v", data, serr)
			}
		case *SyntaxError:
			if cfg != nil {
				t.Fatal("Parse returned a Config with an error")
			}
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("not deterministic: %v, then %v", err, err2)
			}
		case *InvalidError:
			if cfg != nil {
				t.Fatal("Parse returned a Config with an error")
			}
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("not deterministic:\n%v\nthen\n%v", err, err2)
			}
			if len(e.Issues) == 0 {
				t.Fatal("an InvalidError with no issue")
			}
			doc, jerr := decodeLikeJS(data)
			if jerr != nil {
				t.Fatalf("Parse found issues in a document encoding/json refuses: %v", jerr)
			}
			for _, is := range e.Issues {
				if is.Message == "" {
					t.Errorf("issue at %q has no message", is.Path)
				}
				p := is.Path
				if is.Message == "Required" {
					p = parentPath(p)
				}
				if !pathExists(doc, p) {
					t.Errorf("issue path %q (%s) is not in the input %s", is.Path, is.Message, data)
				}
			}
		default:
			t.Fatalf("Parse error of type %T: %v", err, err)
		}
	})
}

// decodeLikeJS decodes data as JSON.parse would: numbers become float64.
// The schema is then judged on the numbers the reference (and srt, which
// reads them as float64) sees, not on their decimal spelling.
func decodeLikeJS(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return toFloats(v), nil
}

func toFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = toFloats(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = toFloats(x[k])
		}
	}
	return v
}

// parentPath is the path of the object a "Required" key is missing from.
func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return "(root)"
}

// pathExists reports whether the dotted path p names a value in doc. Keys
// may themselves hold dots, so every way of splitting p is tried.
func pathExists(doc any, p string) bool {
	if p == "(root)" {
		return true
	}
	var walk func(v any, rest string) bool
	walk = func(v any, rest string) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if rest == k {
					return true
				}
				if after, ok := strings.CutPrefix(rest, k+"."); ok && walk(child, after) {
					return true
				}
			}
		case []any:
			head, tail, more := strings.Cut(rest, ".")
			i, err := strconv.Atoi(head)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != head {
				return false
			}
			return !more || walk(x[i], tail)
		}
		return false
	}
	return walk(doc, p)
}

func TestPathExists(t *testing.T) {
	doc, err := decodeLikeJS([]byte(`{"a": {"b.c": [{"d": 1}], "b": {"c": 2}}, "x": []}`))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"(root)": true, "a": true, "a.b.c": true, "a.b.c.0": true, "a.b.c.0.d": true, "a.b": true,
		"x": true, "x.0": false, "a.b.c.1": false, "a.b.c.00": false, "a.z": false, "a.b.c.0.d.e": false,
	} {
		if got := pathExists(doc, p); got != want {
			t.Errorf("pathExists(%q) = %v, want %v", p, got, want)
		}
	}
}
