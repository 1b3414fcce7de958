//go:build linux

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPublicAPIHasNoInternalTypes: no exported name of the library's
// packages shows a type a host cannot name (one from an internal
// package): a host could neither declare it nor rely on it. It reads the
// packages' compiled export data, as the compiler sees them.
func TestPublicAPIHasNoInternalTypes(t *testing.T) {
	pkgs := []string{"github.com/srt-sandbox/srt/sandbox", "github.com/srt-sandbox/srt/settings"}
	out, err := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	for _, path := range pkgs {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatal(err)
		}
		w := apiWalker{seen: map[types.Type]bool{}}
		for _, name := range pkg.Scope().Names() {
			if obj := pkg.Scope().Lookup(name); obj.Exported() {
				w.walk(path+"."+name, obj.Type())
			}
		}
		for _, f := range w.found {
			t.Error(f)
		}
	}
}

// apiWalker follows the types an exported name shows: exported fields and
// methods, parameters and results, element types.
type apiWalker struct {
	seen  map[types.Type]bool
	found []string
}

func (w *apiWalker) walk(where string, t types.Type) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && strings.Contains(p.Path()+"/", "/internal/") {
			w.found = append(w.found, fmt.Sprintf("%s shows %s, from an internal package", where, t))
			return
		}
		if p := t.Obj().Pkg(); p == nil || !strings.HasPrefix(p.Path(), "github.com/srt-sandbox/") {
			return // the standard library's, and others' own business
		}
		for i := 0; i < t.NumMethods(); i++ {
			if m := t.Method(i); m.Exported() {
				w.walk(where+"."+m.Name(), m.Type())
			}
		}
		w.walk(where, t.Underlying())
	case *types.Pointer:
		w.walk(where, t.Elem())
	case *types.Slice:
		w.walk(where, t.Elem())
	case *types.Array:
		w.walk(where, t.Elem())
	case *types.Map:
		w.walk(where, t.Key())
		w.walk(where, t.Elem())
	case *types.Chan:
		w.walk(where, t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := 0; i < tup.Len(); i++ {
				w.walk(where, tup.At(i).Type())
			}
		}
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if f := t.Field(i); f.Exported() {
				w.walk(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			w.walk(where+"."+t.Method(i).Name(), t.Method(i).Type())
		}
	}
}
