package decide

import "testing"

func TestExcludeHosts(t *testing.T) {
	ex, err := ExcludeHosts([]string{"pinned.example", "*.bank.example", "10.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"pinned.example": true, "a.pinned.example": false, "api.bank.example": true,
		"bank.example": false, "10.1.2.3": true, "other.example": false,
	} {
		if ex(host) != want {
			t.Errorf("%s: %v", host, !want)
		}
	}
	if _, err := ExcludeHosts([]string{"bad pattern"}); err == nil {
		t.Error("a bad pattern was accepted")
	}
}
