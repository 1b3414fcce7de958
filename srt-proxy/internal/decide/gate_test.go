package decide

import (
	"strings"
	"testing"
)

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

// TestHostPatterns: mitmProxy.domains match the canonical host whatever
// the port; a pattern with a port is refused, naming the setting.
func TestHostPatterns(t *testing.T) {
	takes, err := HostPatterns("mitmProxy.domains", []string{"api.example.com", "*.corp.example", "[::1]"})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"api.example.com": true, "API.example.com": true, "x.api.example.com": false,
		"a.corp.example": true, "corp.example": false, "::1": true, "127.0.0.1": false,
	} {
		if takes(host) != want {
			t.Errorf("%s: %v", host, !want)
		}
	}
	_, err = HostPatterns("mitmProxy.domains", []string{"api.example.com:443"})
	if err == nil || !strings.HasPrefix(err.Error(), `mitmProxy.domains: "api.example.com:443": `) {
		t.Errorf("a pattern with a port: %v", err)
	}
}
