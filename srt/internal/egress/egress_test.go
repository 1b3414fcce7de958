package egress

import (
	"strings"
	"testing"
	"time"
)

func TestProxyArgs(t *testing.T) {
	cfg := &Config{
		ParentHTTPS: "http://p:3128", VerdictTimeout: 10 * time.Minute, Debug: true,
		Rules: Rules{RefuseOpaqueTunnels: true, RequireHostMatch: true, AmbiguousTarget: "normalize", StripResponseHeaders: []string{"x-a", "-odd"}},
		TLS: &TLS{CACert: "/c.pem", CAKey: "/k.pem", BundleOut: "/s/srt-ca-1/trust-bundle.crt", ExtraCACerts: []string{"/e.pem"},
			Exclude: []string{"*.pinned.test"}, MaxTunnels: 8, HandshakeTimeout: 1500 * time.Millisecond},
	}
	want := "--srt-mode --decider-fd 3 --control-fd 4 --parent-https=http://p:3128 --verdict-timeout=10m0s -d " +
		"--refuse-opaque-tunnels --require-host-match --ambiguous-target=normalize --strip-response-header=x-a --strip-response-header=-odd " +
		"--tls-terminate --tls-ca-cert=/c.pem --tls-ca-key=/k.pem --tls-bundle-out=/s/srt-ca-1/trust-bundle.crt --tls-extra-ca=/e.pem " +
		"--tls-exclude=*.pinned.test --max-tunnels=8 --handshake-timeout=1.5s"
	if got := strings.Join(proxyArgs(cfg), " "); got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(proxyArgs(&Config{}), " "); got != "--srt-mode --decider-fd 3 --control-fd 4" {
		t.Errorf("defaults: %s", got)
	}
}
