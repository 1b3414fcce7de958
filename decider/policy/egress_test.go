package policy

import (
	"strings"
	"testing"
)

func TestValidEgressEntry(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) // 253 bytes
	cases := []struct {
		name string
		in   string
		want bool
	}{
		{"name", "example.com", true},
		{"name port", "example.com:443", true},
		{"localhost", "localhost", true},
		{"single label", "intranet", true},
		{"hyphen inside", "my-host.example.com", true},
		{"digit labels", "1a.2b.example.com", true},
		{"label 63", label63 + ".com", true},
		{"label 64", strings.Repeat("a", 64) + ".com", false},
		{"name 253", name253, true},
		{"name 254", name253 + "b", false},
		{"wildcard", "*.example.com", true},
		{"wildcard port", "*.example.com:8443", true},
		{"wildcard one label", "*.com", false},
		{"bare star", "*", false},
		{"star port", "*:443", false},
		{"star dot", "*.", false},
		{"uppercase", "Example.com", false},
		{"underscore", "_dmarc.example.com", false},
		{"leading hyphen", "-a.example.com", false},
		{"trailing hyphen", "a-.example.com", false},
		{"empty label", "a..com", false},
		{"trailing dot", "example.com.", false},
		{"last label digit", "example.123", false},
		{"last label starts digit", "example.1com", false},
		{"ipv4", "1.2.3.4", true},
		{"ipv4 port", "1.2.3.4:80", true},
		{"ipv4 leading zero", "1.2.3.04", false},
		{"ipv4 shorthand", "127.1", false},
		{"ipv6 bare", "::1", true},
		{"ipv6 bare full", "2001:db8::1:443", true},
		{"ipv6 bracketed", "[::1]", true},
		{"ipv6 bracketed port", "[2001:db8::1]:443", true},
		{"ipv6 mapped", "[::ffff:1.2.3.4]", true},
		{"ipv6 zone", "fe80::1%eth0", false},
		{"ipv6 zone bracketed", "[fe80::1%eth0]", false},
		{"ipv4 bracketed", "[1.2.3.4]", false},
		{"ipv6 port 0", "[::1]:0", false},
		{"ipv6 junk", "[::1]x", false},
		{"ipv6 unclosed", "[::1", false},
		{"port 0", "example.com:0", false},
		{"port 65535", "example.com:65535", true},
		{"port 65536", "example.com:65536", false},
		{"port leading zero", "example.com:080", false},
		{"empty", "", false},
		{"scheme", "http://example.com", false},
		{"path", "example.com/x", false},
		{"space", "example .com", false},
		{"user", "u@example.com", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValidEgressEntry(tc.in); got != tc.want {
				t.Errorf("ValidEgressEntry(%q) = %v; want %v", tc.in, got, tc.want)
			}
		})
	}
}
