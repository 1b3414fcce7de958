package plan

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// TestStringMasksProxyPassword is item 18 of issue 14: the plan, which
// srt -d prints, showed the per-run proxy password in the environment
// lines (HTTP_PROXY's userinfo, CLOUDSDK_PROXY_PASSWORD). String masks it;
// the sandbox's environment (the bubblewrap arguments) still carries it,
// the control that the password is there to mask.
func TestStringMasksProxyPassword(t *testing.T) {
	const token = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa"
	p := proxyPlan(t, &Proxy{HTTPPort: 3128, SOCKSPort: 1080, User: "srt.x", Token: token})
	s := p.String()
	if strings.Contains(s, token) {
		t.Errorf("the plan's text shows the proxy password:\n%s", s)
	}
	for _, want := range []string{"setenv HTTPS_PROXY=http://srt.x:***@localhost:3128\n", "setenv CLOUDSDK_PROXY_PASSWORD=***\n", "setenv ALL_PROXY=http://srt.x:***@localhost:3128\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("the plan's text lacks %q:\n%s", want, s)
		}
	}
	opts, _ := p.BwrapArgs("/usr/local/bin/srt-init", 0)
	if !strings.Contains(strings.Join(opts, " "), "http://srt.x:"+token+"@localhost:3128") {
		t.Errorf("control: the sandbox's environment lost the password: %q", opts)
	}
}

// bareConfig is the smallest settings file: no network, no filesystem
// rules.
func bareConfig(t *testing.T) *settings.Config {
	t.Helper()
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// proxyPlan is the plan of bash in /home/u/proj under bareConfig, with the
// proxies p describes.
func proxyPlan(t *testing.T, p *Proxy) *Plan {
	t.Helper()
	plan, err := Build(Input{Config: bareConfig(t), FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, Command: []string{"/usr/bin/bash"},
		StateDir: "/tmp/srt-1000", Proxy: p})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
