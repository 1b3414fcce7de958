package settings

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The examples in shared/settings-examples are the contract between this
// package, shared/settings.schema.json and the people who write settings
// files:
//
//   - valid/*.json must parse here and validate against the schema;
//   - invalid/*.json must fail here with exactly the issues listed, one
//     "<dotted.path>: <message>" per line and in order, in the sibling
//     *.expect file, and must fail against the schema too. A file whose
//     problem the schema cannot express says why on a first line
//     "# schema-cannot-express: <why>", and then the schema must accept it,
//     so that the exception stays true.
//   - A file that is not a settings document at all (empty, not JSON,
//     duplicate keys) is checked through Load: its .expect holds the first
//     line of the error, with the file's path written as "<file>".

const (
	cannotExpressPrefix = "# schema-cannot-express:"
	filePlaceholder     = "<file>"
)

// repoRoot is the directory holding go.work, found by walking up from the
// test's working directory.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.work above the test's working directory")
		}
		dir = parent
	}
}

var (
	schemaOnce     sync.Once
	compiledSchema *jsonschema.Schema
	schemaErr      error
)

// settingsSchema compiles shared/settings.schema.json once. Compiling also
// checks the schema against the draft 2020-12 meta-schema.
func settingsSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	schemaOnce.Do(func() {
		p := filepath.Join(repoRoot(tb), "shared", "settings.schema.json")
		data, err := os.ReadFile(p)
		if err != nil {
			schemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if schemaErr = c.AddResource(p, doc); schemaErr != nil {
			return
		}
		compiledSchema, schemaErr = c.Compile(p)
	})
	if schemaErr != nil {
		tb.Fatalf("settings.schema.json: %v", schemaErr)
	}
	return compiledSchema
}

// schemaCheck validates data against the schema. A document that is not
// JSON is rejected, as a schema-aware editor would.
func schemaCheck(tb testing.TB, data []byte) error {
	tb.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return settingsSchema(tb).Validate(inst)
}

// expectation is the parsed content of an .expect file.
type expectation struct {
	cannotExpress string   // why the schema accepts the file; "" if it must not
	lines         []string // expected issues, or the one file-level line
}

func (e expectation) fileLevel() bool {
	return len(e.lines) > 0 && strings.HasPrefix(e.lines[0], filePlaceholder+" ")
}

func readExpectation(t *testing.T, p string) expectation {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("every invalid example needs an .expect file: %v", err)
	}
	var e expectation
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if why, ok := strings.CutPrefix(line, cannotExpressPrefix); ok && i == 0 {
			e.cannotExpress = strings.TrimSpace(why)
			if e.cannotExpress == "" {
				t.Fatalf("%s: %s needs a reason", p, cannotExpressPrefix)
			}
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			t.Fatalf("%s: line %d: want an issue, got %q (a comment is allowed only as the first line, %s)", p, i+1, line, cannotExpressPrefix)
		}
		e.lines = append(e.lines, line)
	}
	if len(e.lines) == 0 {
		t.Fatalf("%s lists no issue", p)
	}
	if e.fileLevel() && len(e.lines) != 1 {
		t.Fatalf("%s: a file-level expectation is a single line", p)
	}
	return e
}

func exampleFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "shared", "settings-examples", dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestValidExamples(t *testing.T) {
	files := exampleFiles(t, "valid")
	if len(files) < 15 {
		t.Fatalf("found %d valid examples, want at least 15", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg == nil {
				t.Fatal("Parse returned neither a Config nor an error")
			}
			if err := schemaCheck(t, data); err != nil {
				t.Errorf("the schema refuses a file srt accepts:\n%v", err)
			}
		})
	}
}

func TestInvalidExamples(t *testing.T) {
	files := exampleFiles(t, "invalid")
	if len(files) < 40 {
		t.Fatalf("found %d invalid examples, want at least 40", len(files))
	}
	expects, _ := filepath.Glob(filepath.Join(filepath.Dir(files[0]), "*.expect"))
	for _, e := range expects {
		if _, err := os.Stat(strings.TrimSuffix(e, ".expect") + ".json"); err != nil {
			t.Errorf("%s has no .json beside it", filepath.Base(e))
		}
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := readExpectation(t, strings.TrimSuffix(f, ".json")+".expect")
			if want.fileLevel() {
				checkFileLevel(t, f, data, want.lines[0])
			} else {
				checkIssues(t, f, data, want.lines)
			}

			schemaErr := schemaCheck(t, data)
			switch {
			case want.cannotExpress == "" && schemaErr == nil:
				t.Errorf("the schema accepts a file srt refuses; tighten the schema, or mark the .expect %q with the reason", cannotExpressPrefix)
			case want.cannotExpress != "" && schemaErr != nil:
				t.Errorf("marked %q (%s), but the schema refuses it, so the mark is wrong:\n%v", cannotExpressPrefix, want.cannotExpress, schemaErr)
			}
		})
	}
}

// checkIssues requires Parse and Load to report exactly want.
func checkIssues(t *testing.T, file string, data []byte, want []string) {
	t.Helper()
	_, err := Parse(data)
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("Parse: got %v (%T), want an *InvalidError", err, err)
	}
	got := make([]string, len(inv.Issues))
	for i, is := range inv.Issues {
		got[i] = is.String()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues differ\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}

	_, found, lerr := Load(file, true)
	var fe *FileError
	if !errors.As(lerr, &fe) || found {
		t.Fatalf("Load: got (%v, %v), want a *FileError", found, lerr)
	}
	if fe.Refusal != RefuseBroken {
		t.Errorf("Load refusal = %q, want %q", fe.Refusal, RefuseBroken)
	}
	if w := file + " does not hold a valid config — " + strings.Join(want, "; "); lerr.Error() != w {
		t.Errorf("Load error\n got: %s\nwant: %s", lerr.Error(), w)
	}
}

// checkFileLevel requires Load's error to read want (with the path as
// <file>), and Parse to refuse the document as not JSON.
func checkFileLevel(t *testing.T, file string, data []byte, want string) {
	t.Helper()
	_, found, err := Load(file, true)
	var fe *FileError
	if !errors.As(err, &fe) || found {
		t.Fatalf("Load: got (%v, %v), want a *FileError", found, err)
	}
	if got := strings.Replace(err.Error(), file, filePlaceholder, 1); got != want {
		t.Errorf("Load error\n got: %s\nwant: %s", got, want)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Error("Load's error does not match ErrInvalid")
	}
	var se *SyntaxError
	if _, perr := Parse(data); !errors.As(perr, &se) {
		t.Errorf("Parse: got %v (%T), want a *SyntaxError", perr, perr)
	}
}
