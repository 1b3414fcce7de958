package sbpl

import (
	"regexp"
	"testing"
)

func TestLanguages(t *testing.T) {
	for _, tc := range []struct {
		a, b       string
		same, disj bool
	}{
		{`^/p/(.*/)?\.bashrc(/.*)?$`, `^/p(/[^/]+)*/\.bashrc(/.*)?$`, true, false},
		{`^/p/(.*/)?\.vscode/.*(/.*)?$`, `^/p(/[^/]+)*/\.vscode(/.*)?$`, false, false},
		{`^/a/[^/]*\.pem$`, `^/b/`, false, true},
		{`^/a/[^/]*\.pem$`, `\.pem$`, false, false},
		{`^/dev/ttys`, `^/dev/tty$`, false, true},
		{`^/A$`, `(?i)^/a$`, false, false},
		{`^/x/(a|b)+$`, `^/x/[ab][ab]*$`, true, false},
		// "//" is no canonical path: these differ only there.
		{`^/a//?b$`, `^/a/b$`, true, false},
	} {
		x, err := fromRegex(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		y, err := fromRegex(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		same, err := sameLang(x, y)
		if err != nil || same != tc.same {
			t.Errorf("sameLang(%s, %s) = %v, %v; want %v", tc.a, tc.b, same, err, tc.same)
		}
		empty, err := emptyLang(setOf('&', x, y))
		if err != nil || empty != tc.disj {
			t.Errorf("disjoint(%s, %s) = %v, %v; want %v", tc.a, tc.b, empty, err, tc.disj)
		}
	}
	if _, err := fromRegex(`^/a\b`); err == nil {
		t.Errorf("a word boundary was modelled")
	}
}

// TestWitnesses: every witness is a canonical path its atom matches.
func TestWitnesses(t *testing.T) {
	m := matcher{res: map[string]*regexp.Regexp{}}
	for _, a := range []atom{
		{kind: 'r', path: `^/p/(.*/)?\.bashrc(/.*)?$`},
		{kind: 'r', path: `^/p(/[^/]+)*/\.vscode(/.*)?$`},
		{kind: 'r', path: `^/h/secrets/[^/]*\.pub$`},
		{kind: 'r', path: `^/dev/ttys`},
		{kind: 's', path: "/a b"},
		{kind: 'l', path: "/x"},
	} {
		ws := witnesses(a)
		if len(ws) == 0 {
			t.Errorf("%q: no witness", a.path)
		}
		for _, w := range ws {
			if ok, known := m.match(a, w); !ok || !known || !canonical(w) {
				t.Errorf("%q: witness %q does not match", a.path, w)
			}
		}
	}
}
