package hostname

import (
	"errors"
	"testing"
)

func TestSplitHostPort(t *testing.T) {
	cases := []struct {
		name string
		in   string
		host string
		port int
		ok   bool
	}{
		{"name", "example.com:443", "example.com", 443, true},
		{"ipv4", "127.0.0.1:8080", "127.0.0.1", 8080, true},
		{"ipv6", "[::1]:443", "::1", 443, true},
		{"ipv6 full", "[2001:db8::1]:65535", "2001:db8::1", 65535, true},
		{"ipv6 zone kept for Canonical to refuse", "[fe80::1%eth0]:22", "fe80::1%eth0", 22, true},
		{"leading zeros", "example.com:0443", "example.com", 443, true},
		{"host kept as written", "EXAMPLE.com.:1", "EXAMPLE.com.", 1, true},
		{"port 1", "a:1", "a", 1, true},
		{"port 0", "example.com:0", "", 0, false},
		{"port 65536", "example.com:65536", "", 0, false},
		{"port six digits", "example.com:000443", "", 0, false},
		{"port empty", "example.com:", "", 0, false},
		{"port sign", "example.com:+1", "", 0, false},
		{"port space", "example.com: 1", "", 0, false},
		{"no port", "example.com", "", 0, false},
		{"ipv6 no port", "[::1]", "", 0, false},
		{"ipv6 unbracketed", "::1:443", "", 0, false},
		{"ipv6 unclosed", "[::1:443", "", 0, false},
		{"ipv6 junk", "[::1]x:443", "", 0, false},
		{"bracketed name", "[example.com]:443", "", 0, false},
		{"empty host", ":443", "", 0, false},
		{"empty brackets", "[]:443", "", 0, false},
		{"empty", "", "", 0, false},
		{"stray bracket", "exa]mple.com:443", "", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host, port, err := SplitHostPort(tc.in)
			if !tc.ok {
				if !errors.Is(err, ErrBadHostPort) {
					t.Fatalf("SplitHostPort(%q) = %q, %d, %v; want ErrBadHostPort", tc.in, host, port, err)
				}
				return
			}
			if err != nil || host != tc.host || port != tc.port {
				t.Fatalf("SplitHostPort(%q) = %q, %d, %v; want %q, %d", tc.in, host, port, err, tc.host, tc.port)
			}
		})
	}
}
