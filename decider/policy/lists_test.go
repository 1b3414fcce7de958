package policy

import (
	"errors"
	"testing"
)

func TestParseLists(t *testing.T) {
	l, errs := ParseLists(
		[]string{"example.com", "*.com", "localhost:3000", "*", "[::1]"},
		[]string{"*", "evil.com:443.allowed.com", "*:22", "2001:db8::1:443"},
		map[string]string{"ok.example": "fine", "empty.example": "", "another": ""},
		true)
	if l != nil {
		t.Fatalf("lists returned despite errors: %+v", l)
	}
	want := []struct {
		path string
		msg  string
	}{
		{"allowedDomains.1", `"*.com" ` + ruleTooBroad + ". " + InvalidPatternMessage},
		{"allowedDomains.3", `"*" ` + ruleStar + ". " + InvalidPatternMessage},
		{"deniedDomains.1", `"evil.com:443.allowed.com" has ":443.allowed.com" after ":", which is not a port: a port is a number from 1 to 65535. ` + InvalidDenyPatternMessage},
		{"deniedDomains.3", `"2001:db8::1:443" ` + ruleColons + ". " + InvalidDenyPatternMessage},
		{"deniedDomainReasons.another", EmptyReasonMessage},
		{"deniedDomainReasons.empty.example", EmptyReasonMessage},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors %v; want %d", len(errs), errs, len(want))
	}
	for i, w := range want {
		e := errs[i]
		if e.Path() != w.path || e.Err.Error() != w.msg || e.Error() != w.path+": "+w.msg {
			t.Errorf("error %d = %q (path %q); want %s: %s", i, e.Error(), e.Path(), w.path, w.msg)
		}
	}
	var pe *PatternError
	if !errors.As(errs[0], &pe) || pe.Entry != "*.com" {
		t.Errorf("errs[0] does not unwrap to the PatternError: %v", errs[0])
	}
}

func TestParseListsValid(t *testing.T) {
	reasons := map[string]string{"evil.example": "no", "unmatched.example": "never fires"}
	l, errs := ParseLists([]string{"a.example", "[::1]:80"}, []string{"evil.example", "*:25"}, reasons, false)
	if errs != nil {
		t.Fatal(errs)
	}
	if len(l.Allowed) != 2 || len(l.Denied) != 2 || l.Strict {
		t.Fatalf("lists %+v", l)
	}
	if l.Allowed[1].String() != "[::1]:80" || !l.Denied[1].DenyAll() || l.Denied[1].Port() != 25 {
		t.Errorf("entries %+v", l)
	}
	reasons["evil.example"] = "changed"
	if l.DeniedReasons["evil.example"] != "no" {
		t.Error("ParseLists kept the caller's map")
	}
	if l, errs := ParseLists(nil, nil, nil, false); errs != nil || l == nil || l.DeniedReasons != nil {
		t.Errorf("empty: %+v %v", l, errs)
	}
}
