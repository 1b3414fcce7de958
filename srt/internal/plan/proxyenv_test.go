package plan

import (
	"net/url"
	"testing"

	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
)

// The attribution user's vectors (shared/srtlink/users.json), srt's
// side: whatever user srt makes of a key ("+", "/" and "=" among them),
// the proxy URLs the command gets carry it exactly, so that srt-proxy
// passes the decider the user the decider registered the command's list
// under.
func TestProxyEnvUserVectors(t *testing.T) {
	const token = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa"
	for _, c := range srtlinktest.Keys(t) {
		p := proxyPlan(t, &Proxy{HTTPPort: 3128, SOCKSPort: 1080, User: c.User, Token: token})
		env := map[string]string{}
		for _, op := range p.Env {
			env[op.Name] = op.Value
		}
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY"} {
			u, err := url.Parse(env[k])
			if err != nil || u.User == nil {
				t.Errorf("%s: %s=%q: %v", c.Name, k, env[k], err)
				continue
			}
			if pw, _ := u.User.Password(); u.User.Username() != c.User || pw != token {
				t.Errorf("%s: %s=%q carries the user %q, want %q", c.Name, k, env[k], u.User.Username(), c.User)
			}
		}
		if got := env["CLOUDSDK_PROXY_USERNAME"]; got != c.User {
			t.Errorf("%s: CLOUDSDK_PROXY_USERNAME=%q, want %q", c.Name, got, c.User)
		}
	}
}
