package settings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/settingsfile"
)

// dynamicMessages are the c.Add call sites whose message is not a literal
// in this package (or in the part of decider/settingsfile it checks with),
// by enclosing function, with the text they produce. A new site of that kind
// fails TestExamplesCoverEveryMessage until it is listed.
var dynamicMessages = map[string][]string{
	// unknownKey builds its message, with or without a hint.
	"unknownKey": {
		`unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule`,
		`unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule; did you mean "%s"?`,
	},
	// Patterns reports the rule an entry broke, then the reference's
	// message of the list it checks where the reference refuses it too.
	"Patterns": patternMessages(),
	// maskFieldList reports a refused injectHosts entry as Patterns does.
	"maskFieldList": patternMessages(),
	// NetworkObject's deniedResolvedAddresses reports the policy package's error.
	"NetworkObject": {policy.InvalidAddressRangeMessage},
	// unimplemented says what Keys says of what srt does not implement yet.
	"unimplemented": notYetMessages(),
}

// notYetMessages are the NotYet messages of Keys.
func notYetMessages() []string {
	var out []string
	for _, k := range Keys {
		if k.NotYet != "" {
			out = append(out, k.NotYet)
		}
	}
	return out
}

// patternMessages are the messages settingsfile.PatternIssue can give:
// every rule of the domain-pattern grammar, and every list's message of
// the reference after one.
func patternMessages() []string {
	var out []string
	for _, r := range policy.PatternRules {
		out = append(out, "%q "+r+"%s")
	}
	for _, m := range []string{settingsfile.PatternMessage, settingsfile.AllowPatternMessage, settingsfile.DenyPatternMessage} {
		out = append(out, "%q %s. "+m)
	}
	return out
}

// TestExamplesCoverEveryMessage reads every c.Add call in this package's
// source and requires each message it can produce to appear in some
// invalid example's .expect file, so that no refusal goes untested there.
func TestExamplesCoverEveryMessage(t *testing.T) {
	formats := packageMessages(t)
	if len(formats) < 30 {
		t.Fatalf("found only %d messages; is the source scan broken?", len(formats))
	}

	var expected []string
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "shared", "settings-examples", "invalid", "*.expect"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if _, msg, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, "#") {
				expected = append(expected, msg)
			}
		}
	}
	for _, format := range formats {
		re := formatRegexp(format)
		found := false
		for _, msg := range expected {
			if re.MatchString(msg) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no invalid example reports %q; add one under shared/settings-examples/invalid", format)
		}
	}
}

// formatRegexp matches the messages a Printf format can produce.
func formatRegexp(format string) *regexp.Regexp {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range verb.FindAllStringIndex(format, -1) {
		b.WriteString(regexp.QuoteMeta(format[last:m[0]]))
		b.WriteString(".*")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(format[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// packageMessages lists the message formats of every c.Add call in the
// package's non-test files and in the files of decider/settingsfile this
// package checks with (its checker and the decider's network keys; not the
// decider's own file, which srt does not read).
func packageMessages(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"check.go", "network.go"} {
		names = append(names, filepath.Join(repoRoot(t), "decider", "settingsfile", f))
	}
	consts := map[string]ast.Expr{}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						consts[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}

	seen := map[string]bool{}
	var out []string
	addFormat := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isCheckerAdd(call) || len(call.Args) < 2 {
					return true
				}
				format, ok := constString(call.Args[1], consts)
				if !ok {
					t.Errorf("%s: c.Add with a format that is not a constant", fset.Position(call.Pos()))
					return true
				}
				if format == "%s" && len(call.Args) == 3 {
					if s, ok := messageOf(call.Args[2], consts); ok {
						addFormat(s)
						return true
					}
					dyn, listed := dynamicMessages[fd.Name.Name]
					if !listed {
						t.Errorf("%s: c.Add(p, \"%%s\", …) in %s with a message that is not a constant; list what it says in dynamicMessages", fset.Position(call.Pos()), fd.Name.Name)
					}
					for _, s := range dyn {
						addFormat(s)
					}
					return true
				}
				addFormat(format)
				return true
			})
		}
	}
	return out
}

func isCheckerAdd(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Add" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "c"
}

// messageOf is the constant text of e, or of the format of an
// fmt.Sprintf(format, …) call.
func messageOf(e ast.Expr, consts map[string]ast.Expr) (string, bool) {
	if call, ok := e.(*ast.CallExpr); ok {
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(call.Args) > 0 {
			return constString(call.Args[0], consts)
		}
		return "", false
	}
	return constString(e, consts)
}

// constString evaluates a string constant expression: literals, package
// constants, and concatenations of them.
func constString(e ast.Expr, consts map[string]ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(x.Value)
		return s, err == nil
	case *ast.Ident:
		if v, ok := consts[x.Name]; ok {
			return constString(v, consts)
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, ok1 := constString(x.X, consts)
			b, ok2 := constString(x.Y, consts)
			return a + b, ok1 && ok2
		}
	case *ast.ParenExpr:
		return constString(x.X, consts)
	}
	return "", false
}
