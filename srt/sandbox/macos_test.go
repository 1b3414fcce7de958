package sandbox

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// TestMacOSUnsupported: each setting srt cannot honour on macOS is refused
// with an error naming it; what it can run passes.
func TestMacOSUnsupported(t *testing.T) {
	base := `"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}`
	for _, c := range []struct{ settings, field string }{
		{`{"network":{"allowedDomains":[],"deniedDomains":[]},` + base + `}`, ""},
		{`{"network":{"allowedDomains":[],"deniedDomains":[],"allowLocalBinding":true,"allowMachLookup":["x.*"]},"allowPty":true,` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[],"httpProxyPort":8080,"socksProxyPort":1081},` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[]},` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[],"httpProxyPort":8080},` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[],"parentProxy":{"http":"http://127.0.0.1:1"}},` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[],"mitmProxy":{"socketPath":"/tmp/m.sock","domains":["x.test"]}},` + base + `}`, ""},
		{`{"network":{"allowedDomains":["github.com"],"deniedDomains":[]},"credentials":{"allowPlaintextInject":true,"envVars":[{"name":"TOKEN","mode":"mask"}]},` + base + `}`, "credentials.envVars.0.mode"},
		{`{"network":{"allowedDomains":[],"deniedDomains":[],"exposeLoopbackPorts":[8000]},` + base + `}`, "network.exposeLoopbackPorts"},
		{`{"network":{"allowedDomains":[],"deniedDomains":[]},"limits":{"processes":10},` + base + `}`, "limits"},
		{`{"network":{"allowedDomains":[],"deniedDomains":[]},"backend":"landlock",` + base + `}`, "backend"},
	} {
		cfg, err := settings.Parse([]byte(c.settings))
		if err != nil {
			t.Fatalf("%s: %v", c.settings, err)
		}
		err = MacOSUnsupported(cfg)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: refused: %v", c.settings, err)
		case c.field != "" && (err == nil || !strings.HasPrefix(err.Error(), c.field+":")):
			t.Errorf("%s: %v; want an error naming %s", c.settings, err, c.field)
		}
	}
}
