package sbpl

import (
	"strings"
	"testing"
)

func TestReadStrings(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"plain", `"abc"`, "abc"},
		{"escapes", `"a\"b\\c\nd\te"`, "a\"b\\c\nd\te"},
		{"hex", `"\x41;\x42"`, "AB"},
		{"non-ascii", `"/Users/zoë/日本"`, "/Users/zoë/日本"},
		{"regex literal keeps backslashes", `#"^/a\.b\"c$"`, `^/a\.b\"c$`},
		{"regex literal then comment", "#\"x\" ; (deny default)", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, err := Read(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(ns) != 1 || ns[0].Text != tc.want {
				t.Fatalf("read %q: got %#v, want one datum %q", tc.src, ns, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unclosed list", `(allow file-read*`, `unclosed "("`},
		{"stray close", `(version 1))`, `unexpected ")"`},
		{"unterminated string", `(allow file-read* (literal "/a))`, "unterminated string"},
		{"unknown escape", `(allow file-read* (literal "\q"))`, `unknown string escape "\q"`},
		{"bad hex", `(allow file-read* (literal "\xZZ"))`, `bad \x escape "ZZ"`},
		{"unterminated regex", `(allow file-read* (regex #"^/a`, "unterminated regex literal"},
		{"define", `(define (f) 1)`, `unsupported top-level form "define"`},
		{"no operation", `(allow (literal "/a"))`, "names no operation"},
		{"op after filter", `(allow file-read* (literal "/a") file-write*)`, `operation "file-write*" after a filter`},
		{"quote", `(allow file-read* '(x))`, "quotation"},
		{"string at top", `"x"`, "a top-level form must be a list"},
		{"two versions", `(version 1)(version 1)`, "a second (version"},
		{"deep", strings.Repeat("(", 100) + strings.Repeat(")", 100), "nesting deeper than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %v, want an error containing %q", tc.src, err, tc.want)
			}
		})
	}
}

func TestParseRule(t *testing.T) {
	p, err := Parse(`(version 1)
; a comment
#| a block
comment |#
(deny default (with message "TAG"))
(allow file-ioctl file-read-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))`)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "1" || len(p.Rules) != 2 {
		t.Fatalf("got %+v", p)
	}
	r := p.Rules[1]
	if r.Action != "allow" || strings.Join(r.Ops, ",") != "file-ioctl,file-read-data" || len(r.Filters) != 1 || len(r.Modifiers) != 0 {
		t.Fatalf("rule: %+v", r)
	}
	if got := Render(r.Filters[0]); got != `(require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE))` {
		t.Fatalf("render: %s", got)
	}
	if got := Render(p.Rules[0].Modifiers[0]); got != `(with message "TAG")` {
		t.Fatalf("modifier: %s", got)
	}
}
