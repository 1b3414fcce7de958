package settings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"testing"

	"github.com/srt-sandbox/decider/settingsfile"
)

// TestDeciderKnowsEveryNetworkKey: the decider run on its own reads the
// network block with the keys it applies (settingsfile.NetworkObject) and
// refuses each of srt's other keys with its own reason
// (settingsfile.NotTheDeciders). A key added to srt's network block must be
// added there too, or the decider would call it unknown ("misspelt").
func TestDeciderKnowsEveryNetworkKey(t *testing.T) {
	keys := srtNetworkKeys(t)
	if len(keys) < 15 {
		t.Fatalf("found only %d of srt's own network keys (%q); is the source scan broken?", len(keys), keys)
	}
	for _, k := range keys {
		if _, ok := settingsfile.NotTheDeciders[k]; !ok {
			t.Errorf("network.%s: srt's key is not in settingsfile.NotTheDeciders; say there why the decider does not apply it", k)
		}
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
	}
	for k := range settingsfile.NotTheDeciders {
		if !known[k] {
			t.Errorf("settingsfile.NotTheDeciders names %q, which is not a key of srt's network block", k)
		}
	}
}

// srtNetworkKeys are the names of the fields network passes to
// NetworkObject: the keys of the block that are srt's own.
func srtNetworkKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "schema_network.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "NetworkObject" || len(call.Args) != 4 {
			return true
		}
		list, ok := call.Args[3].(*ast.CompositeLit)
		if !ok {
			t.Fatal("NetworkObject's fields are not a literal list")
		}
		for _, e := range list.Elts {
			for _, kv := range e.(*ast.CompositeLit).Elts {
				kv := kv.(*ast.KeyValueExpr)
				if kv.Key.(*ast.Ident).Name == "Name" {
					s, _ := strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
					keys = append(keys, s)
				}
			}
		}
		return false
	})
	return keys
}

// FuzzDeciderAgrees: a network block of the decider's keys alone is judged
// the same by srt (in a settings file) and by the decider (in its own
// file): the same issues, in the same order, or the same lists.
func FuzzDeciderAgrees(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `null`, `{"allowedDomains":[],"deniedDomains":[]}`,
		`{"allowedDomains":["a.example","*.com",1],"deniedDomains":["*"],"deniedDomainReasons":{"*":"","x":2},"strictAllowlist":1,"deniedResolvedAddresses":["10.0.0.0/8","x"]}`,
		`{"allowedDomains":["[::1]:443","localhost"],"deniedDomains":["b.example:22"],"allowedDomain":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		v, err := settingsfile.Parse(block)
		if err != nil {
			return
		}
		if v.Kind == kindObject {
			for _, m := range v.Obj {
				if _, theirs := settingsfile.NotTheDeciders[m.Key]; theirs {
					return // the decider refuses it; srt checks it
				}
			}
		}
		n, derr := settingsfile.ParseDecider([]byte(`{"network":` + string(block) + `}`))
		cfg, serr := Parse([]byte(`{"network":` + string(block) + `,"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
		if (derr == nil) != (serr == nil) {
			t.Fatalf("the decider says %v, srt says %v", derr, serr)
		}
		if derr == nil {
			if !reflect.DeepEqual(*n, cfg.Network.Network) {
				t.Fatalf("the decider reads %+v, srt %+v", *n, cfg.Network.Network)
			}
			return
		}
		if derr.Error() != serr.Error() {
			t.Fatalf("the decider: %v\nsrt:         %v", derr, serr)
		}
	})
}
