package hostname

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalHost(t *testing.T) {
	const bad = "\x00malformed" // marks an expected ErrMalformed
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"name", "example.com", "example.com"},
		{"uppercase", "ExAmPlE.CoM", "example.com"},
		{"trailing dot", "example.com.", "example.com"},
		{"localhost dot", "localhost.", "localhost"},
		{"single label", "myhost", "myhost"},
		{"underscore", "_acme-challenge.example.com", "_acme-challenge.example.com"},
		{"hyphens", "-x-.example.com", "-x-.example.com"},
		{"punycode passes", "XN--R8JZ45G.jp", "xn--r8jz45g.jp"},
		{"digits not last", "123.example", "123.example"},
		{"hex-like not number", "a.0xg", "a.0xg"},
		{"max length", strings.Repeat("a", 255), strings.Repeat("a", 255)},
		// IPv4 shorthand (WHATWG IPv4 parser).
		{"dotted quad", "127.0.0.1", "127.0.0.1"},
		{"two parts", "127.1", "127.0.0.1"},
		{"three parts", "127.0.1", "127.0.0.1"},
		{"integer", "2130706433", "127.0.0.1"},
		{"metadata integer", "2852039166", "169.254.169.254"},
		{"hex octet", "0x7f.0.0.1", "127.0.0.1"},
		{"hex upper", "0X7F.0.0.1", "127.0.0.1"},
		{"hex integer", "0x7f000001", "127.0.0.1"},
		{"octal octet", "0177.0.0.1", "127.0.0.1"},
		{"octal leading zero", "1.2.3.04", "1.2.3.4"},
		{"empty hex", "0x.0x.0x.0x", "0.0.0.0"},
		{"ipv4 trailing dot", "127.0.0.1.", "127.0.0.1"},
		{"zero", "0", "0.0.0.0"},
		{"max integer", "4294967295", "255.255.255.255"},
		{"integer overflow", "4294967296", bad},
		{"huge integer", "99999999999999999999999", bad},
		{"octet overflow", "256.0.0.1", bad},
		{"last part overflow", "1.2.65536", bad},
		{"last part fits", "1.2.65535", "1.2.255.255"},
		{"five parts", "1.2.3.4.5", bad},
		{"bad octal", "08.0.0.1", bad},
		{"bad last octal", "1.2.3.09", bad},
		{"name then number", "example.123", bad},
		{"name then hex", "example.0x1f", bad},
		{"empty hex last", "example.0x", bad},
		{"empty middle part", "1..2.3", bad},
		// IPv6.
		{"ipv6 bare", "::1", "::1"},
		{"ipv6 bracketed", "[::1]", "::1"},
		{"ipv6 expanded", "0:0:0:0:0:0:0:1", "::1"},
		{"ipv6 upper", "[2001:DB8::A]", "2001:db8::a"},
		{"ipv6 leading zeros", "[2001:0db8::0001]", "2001:db8::1"},
		{"ipv6 mapped", "::ffff:127.0.0.1", "127.0.0.1"},
		{"ipv6 mapped bracketed", "[::ffff:7f00:1]", "127.0.0.1"},
		{"ipv6 mapped upper", "[::FFFF:1.2.3.4]", "1.2.3.4"},
		{"ipv6 compatible", "[::1.2.3.4]", "::102:304"},
		{"ipv6 nat64", "[64:ff9b::1.2.3.4]", "64:ff9b::102:304"},
		{"ipv6 unspecified", "[::]", "::"},
		{"ipv6 zone", "[fe80::1%eth0]", bad},
		{"ipv6 zone bare", "fe80::1%eth0", bad},
		{"ipv6 zone encoded", "fe80::1%25eth0", bad},
		{"ipv6 unclosed", "[::1", bad},
		{"ipv6 extra", "[::1]x", bad},
		{"ipv6 invalid", "[1::2::3]", bad},
		{"ipv4 in brackets", "[127.0.0.1]", bad},
		{"name in brackets", "[example.com]", bad},
		{"empty brackets", "[]", bad},
		{"ipv6 with port", "::1:443:x", bad},
		// Malformed names.
		{"empty", "", bad},
		{"too long", strings.Repeat("a", 256), bad},
		{"dot", ".", bad},
		{"dots", "..", bad},
		{"leading dot", ".example.com", bad},
		{"empty label", "a..example.com", bad},
		{"two trailing dots", "example.com..", bad},
		{"nul", "evil.com\x00.allowed.com", bad},
		{"newline", "evil.com\r\n", bad},
		{"space", "exa mple.com", bad},
		{"slash", "example.com/x", bad},
		{"colon port", "example.com:443", bad},
		{"at", "user@example.com", bad},
		{"percent", "example%2ecom", bad},
		{"star", "*.example.com", bad},
		{"non-ascii", "exämple.com", bad},
		{"kelvin", "\u212aexample.com", bad},
		{"fullwidth dot", "example\uff0ecom", bad},
		{"invalid utf8", "ex\xffample.com", bad},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if tc.want == bad {
				if !errors.Is(err, ErrMalformed) || got != "" {
					t.Fatalf("Canonical(%q) = %q, %v; want ErrMalformed", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if again, err := Canonical(got); err != nil || again != got {
				t.Errorf("not idempotent: Canonical(%q) = %q, %v", got, again, err)
			}
		})
	}
}

func TestMalformedHostText(t *testing.T) {
	if ErrMalformed.Error() != "malformed host" {
		t.Errorf("ErrMalformed = %q", ErrMalformed)
	}
}
