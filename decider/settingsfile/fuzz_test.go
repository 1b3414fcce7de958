package settingsfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDecider checks the decider's settings reader on arbitrary input,
// seeded with the network blocks of shared/settings-examples and the
// documents of TestParseDecider:
//
//   - it does not panic, and returns either a Network or a *SyntaxError /
//     *InvalidError, the same each time;
//   - an InvalidError lists at least one issue, each with a message and a
//     path that is in the input (for "Required", the object the key is
//     missing from is);
//   - an accepted file has its lists parsed (Lists) entry for entry, and the
//     block written back as JSON is accepted again, with the same result.
func FuzzParseDecider(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "settings-examples", "*", "*.json"))
	if len(files) == 0 {
		f.Fatal("no settings examples")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// The network block alone: the decider's file.
		if v, err := Parse(data); err == nil && v.Kind == Object && v.Get("network") != nil {
			var doc map[string]json.RawMessage
			if json.Unmarshal(data, &doc) == nil && doc["network"] != nil {
				f.Add([]byte(`{"network":` + string(doc["network"]) + `}`))
			}
		}
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"network":{}}`, `{"network":{"allowedDomains":["a.example"],"deniedDomains":["*"],"deniedDomainReasons":{"*":"no"},"strictAllowlist":true,"deniedResolvedAddresses":["10.0.0.0/8"]}}`,
		`{"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}},"filesystem":{}}`, `{"network":{"allowedDomains":[],"deniedDomains":[],"deniedDomainReasons":{"a.b":""}}}`} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseDecider(data)
		n2, err2 := ParseDecider(data)
		switch e := err.(type) {
		case nil:
			if n == nil || n.Lists == nil {
				t.Fatalf("accepted without a Network or its Lists: %+v", n)
			}
			if err2 != nil || !reflect.DeepEqual(n, n2) {
				t.Fatalf("not deterministic: (%+v, %v), then (%+v, %v)", n, err, n2, err2)
			}
			if len(n.Lists.Allowed) != len(n.AllowedDomains) || len(n.Lists.Denied) != len(n.DeniedDomains) || n.Lists.Strict != n.StrictAllowlist {
				t.Fatalf("the lists do not match the entries: %+v", n)
			}
			again, err := ParseDecider(rewrite(t, n))
			if err != nil {
				t.Fatalf("the accepted block written back is refused: %v", err)
			}
			if !reflect.DeepEqual(again, n) {
				t.Fatalf("written back and read again: %+v, was %+v", again, n)
			}
		case *SyntaxError:
			if n != nil {
				t.Fatal("a Network with an error")
			}
			if _, perr := Parse(data); perr == nil || perr.Error() != err.Error() {
				t.Fatalf("a syntax error (%v) that Parse does not give (%v)", err, perr)
			}
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("not deterministic: %v, then %v", err, err2)
			}
		case *InvalidError:
			if n != nil {
				t.Fatal("a Network with an error")
			}
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("not deterministic:\n%v\nthen\n%v", err, err2)
			}
			if len(e.Issues) == 0 || !errors.Is(err, ErrInvalid) {
				t.Fatalf("an InvalidError with no issue, or not ErrInvalid: %v", err)
			}
			root, perr := Parse(data)
			if perr != nil {
				t.Fatalf("issues in a document that is not JSON: %v", perr)
			}
			for _, is := range e.Issues {
				if is.Message == "" {
					t.Errorf("issue at %q has no message", is.Path)
				}
				p := is.Path
				if is.Message == "Required" {
					p = "(root)"
					if i := strings.LastIndexByte(is.Path, '.'); i >= 0 {
						p = is.Path[:i]
					}
				}
				if !hasPath(root, p) {
					t.Errorf("issue path %q (%s) is not in the input %s", is.Path, is.Message, data)
				}
			}
		default:
			t.Fatalf("an error of type %T: %v", err, err)
		}
	})
}

// rewrite is an accepted Network as a decider settings document.
func rewrite(t *testing.T, n *Network) []byte {
	t.Helper()
	block := map[string]any{"allowedDomains": append([]string{}, n.AllowedDomains...), "deniedDomains": append([]string{}, n.DeniedDomains...)}
	if n.DeniedDomainReasons != nil {
		block["deniedDomainReasons"] = n.DeniedDomainReasons
	}
	if n.StrictAllowlist {
		block["strictAllowlist"] = true
	}
	if n.DeniedResolvedAddresses != nil {
		var rs []string
		for _, p := range n.DeniedResolvedAddresses {
			rs = append(rs, p.String())
		}
		block["deniedResolvedAddresses"] = rs
	}
	b, err := json.Marshal(map[string]any{"network": block})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hasPath reports whether the dotted path p names a value in v. Keys may
// themselves hold dots, so every way of splitting p is tried.
func hasPath(v *Value, p string) bool {
	if p == "(root)" {
		return true
	}
	switch v.Kind {
	case Object:
		for _, m := range v.Obj {
			if p == m.Key {
				return true
			}
			if rest, ok := strings.CutPrefix(p, m.Key+"."); ok && hasPath(m.Val, rest) {
				return true
			}
		}
	case Array:
		head, tail, more := strings.Cut(p, ".")
		i, err := strconv.Atoi(head)
		if err != nil || i < 0 || i >= len(v.Arr) || strconv.Itoa(i) != head {
			return false
		}
		return !more || hasPath(v.Arr[i], tail)
	}
	return false
}
