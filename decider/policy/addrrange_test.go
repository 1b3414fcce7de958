package policy

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseAddressRange(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // "" = invalid
	}{
		{"ipv4 cidr", "10.0.0.0/8", "10.0.0.0/8"},
		{"ipv4 address", "192.168.1.10", "192.168.1.10/32"},
		{"ipv6 cidr", "fc00::/7", "fc00::/7"},
		{"ipv6 address", "fd00::1", "fd00::1/128"},
		{"masked", "10.1.2.3/8", "10.0.0.0/8"},
		{"prefix zero", "0.0.0.0/0", "0.0.0.0/0"},
		{"ipv6 prefix zero", "::/0", "::/0"},
		{"prefix leading zero", "10.0.0.0/08", "10.0.0.0/8"},
		{"prefix 32", "1.2.3.4/32", "1.2.3.4/32"},
		{"prefix 128", "::1/128", "::1/128"},
		{"mapped range", "::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"mapped address", "::ffff:1.2.3.4", "1.2.3.4/32"},
		{"mapped 96", "::ffff:0.0.0.0/96", "0.0.0.0/0"},
		{"mapped hex", "::ffff:a00:0/104", "10.0.0.0/8"},
		{"ipv6 zone dropped", "fe80::1%eth0", "fe80::1/128"},
		{"ipv6 zone cidr", "fe80::%eth0/10", "fe80::/10"},
		{"ipv6 uppercase", "FC00::/7", "fc00::/7"},
		{"compatible not unmapped", "::1.2.3.4/128", "::102:304/128"},
		{"mapped too short", "::ffff:10.0.0.0/95", ""},
		{"prefix 33", "1.2.3.4/33", ""},
		{"prefix 129", "::/129", ""},
		{"prefix four digits", "1.2.3.4/0008", ""},
		{"prefix empty", "1.2.3.4/", ""},
		{"prefix sign", "1.2.3.4/+8", ""},
		{"prefix negative", "1.2.3.4/-1", ""},
		{"two slashes", "1.2.3.4/8/8", ""},
		{"ipv4 zone", "1.2.3.4%eth0", ""},
		{"bracketed", "[::1]", ""},
		{"bracketed cidr", "[fc00::]/7", ""},
		{"shorthand", "127.1", ""},
		{"leading zero", "010.0.0.0/8", ""},
		{"name", "example.com", ""},
		{"empty", "", ""},
		{"only slash", "/8", ""},
		{"space", " 10.0.0.0/8", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAddressRange(tc.in)
			if tc.want == "" {
				var re *AddressRangeError
				if !errors.As(err, &re) || re.Entry != tc.in || err.Error() != InvalidAddressRangeMessage {
					t.Fatalf("ParseAddressRange(%q) = %v, %v; want AddressRangeError", tc.in, got, err)
				}
				return
			}
			if err != nil || got != netip.MustParsePrefix(tc.want) {
				t.Fatalf("ParseAddressRange(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestProxyOnlyDefaultDeniedRanges(t *testing.T) {
	want := []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"}
	if len(ProxyOnlyDefaultDeniedRanges) != len(want) {
		t.Fatalf("got %v", ProxyOnlyDefaultDeniedRanges)
	}
	for i, w := range want {
		if ProxyOnlyDefaultDeniedRanges[i].String() != w {
			t.Errorf("range %d = %v; want %s", i, ProxyOnlyDefaultDeniedRanges[i], w)
		}
	}
}
