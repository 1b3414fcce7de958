package seatbelt

import (
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// TestEnvironmentLikeTheReference: ssh through the SOCKS proxy with nc
// where that needs no credentials, and srt's JVM option after the
// inherited ones (the JVM takes the last).
func TestEnvironmentLikeTheReference(t *testing.T) {
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	const ssh = "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='nc -X 5 -x localhost:1080 %h %p'"
	for _, tc := range []struct {
		name      string
		env       Env
		want, not []string
	}{
		{"own proxy without credentials", Env{HTTPPort: 3128, SOCKSPort: 1080, Environ: []string{"JAVA_TOOL_OPTIONS=-Xmx1g -Djava.net.preferIPv4Stack=false"}},
			[]string{ssh, "JAVA_TOOL_OPTIONS=-Xmx1g -Djava.net.preferIPv4Stack=false -Djava.net.preferIPv4Stack=true"}, nil},
		{"external proxies", Env{HTTPPort: 3128, SOCKSPort: 1080, HTTPExternal: true, SOCKSExternal: true, ProxyToken: "tok"},
			[]string{ssh, "JAVA_TOOL_OPTIONS=-Djava.net.preferIPv4Stack=true"}, nil},
		// nc cannot send srt's credentials: no ProxyCommand that would fail.
		{"own proxy with credentials", Env{HTTPPort: 3128, SOCKSPort: 1080, ProxyToken: "tok"},
			nil, []string{"GIT_SSH_COMMAND="}},
		{"no network", Env{}, nil, []string{"GIT_SSH_COMMAND="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.Command, env.Cwd, env.Home, env.Nonce, env.FS = "true", "/Users/u/proj", "/Users/u", "n", macHost()
			p := mustGenerate(t, cfg, env)
			for _, w := range tc.want {
				if !slices.Contains(p.Env, w) {
					t.Errorf("the environment has no %q:\n%s", w, strings.Join(p.Env, "\n"))
				}
			}
			for _, n := range tc.not {
				for _, kv := range p.Env {
					if strings.HasPrefix(kv, n) {
						t.Errorf("the environment has %q", kv)
					}
				}
			}
		})
	}
}
