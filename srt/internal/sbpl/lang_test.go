package sbpl

import "testing"

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
