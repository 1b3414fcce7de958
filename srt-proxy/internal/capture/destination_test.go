package capture

import (
	"net/netip"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/captured"
)

func TestDestination(t *testing.T) {
	tab := &fakeip.Table{}
	v4, v6 := tab.Lookup("example.com")
	s := &Sandbox{Table: tab, User: "srt.k1", Loopback: map[string]string{
		"127.0.0.1:8765": "localhost",
		"[::1]:8765":     "LocalHost.",
		"127.0.0.1:9000": "127.0.0.1",
	}}
	local4 := netip.MustParseAddrPort("127.0.0.1:4000")
	local6 := netip.MustParseAddrPort("[::1]:4000")
	for _, c := range []struct {
		name  string
		orig  netip.AddrPort
		local netip.AddrPort
		want  captured.Destination
	}{
		{"fake v4", netip.AddrPortFrom(v4, 443), local4, captured.Destination{Host: "example.com", Port: 443}},
		{"fake v6", netip.AddrPortFrom(v6, 80), local6, captured.Destination{Host: "example.com", Port: 80}},
		{"fake mapped", netip.AddrPortFrom(netip.AddrFrom16(v4.As16()), 443), local6, captured.Destination{Host: "example.com", Port: 443}},
		{"fake never handed out", netip.MustParseAddrPort("198.18.250.1:443"), local4,
			captured.Destination{Host: "198.18.250.1", Port: 443, Literal: true, Refuse: whyUnknownFake}},
		{"namespace's own address", netip.MustParseAddrPort("198.18.0.1:443"), local4,
			captured.Destination{Host: "198.18.0.1", Port: 443, Literal: true}},
		{"literal v4", netip.MustParseAddrPort("192.0.2.7:5432"), local4, captured.Destination{Host: "192.0.2.7", Port: 5432, Literal: true}},
		{"literal v6", netip.MustParseAddrPort("[2001:DB8::7]:22"), local6, captured.Destination{Host: "2001:db8::7", Port: 22, Literal: true}},
		{"loopback named", netip.MustParseAddrPort("127.0.0.1:8765"), local4, captured.Destination{Host: "localhost", Port: 8765}},
		{"loopback v6 named", netip.MustParseAddrPort("[::1]:8765"), local6, captured.Destination{Host: "localhost", Port: 8765}},
		{"loopback literal entry", netip.MustParseAddrPort("127.0.0.1:9000"), local4, captured.Destination{Host: "127.0.0.1", Port: 9000, Literal: true}},
		{"loopback unlisted", netip.MustParseAddrPort("127.0.0.2:8765"), local4, captured.Destination{Host: "127.0.0.2", Port: 8765, Literal: true}},
		{"the listener itself", local4, local4, captured.Destination{Host: "127.0.0.1", Port: 4000, Literal: true, Refuse: whyNotRedirected}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.want.User = "srt.k1"
			if got := s.Destination(c.orig, c.local); got != c.want {
				t.Errorf("Destination(%v) = %+v, want %+v", c.orig, got, c.want)
			}
		})
	}
}
