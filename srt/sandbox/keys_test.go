//go:build linux

package sandbox

import (
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// What srt passes to srt-proxy's command line is exactly the settings
// keys settings.Keys says srt-proxy reads when it starts: each network
// key set to its example changes srt-proxy's flags if and only if it is
// settings.ReadByProxy. (So a key passed to srt-proxy is warned about on
// a live update, which cannot change it.)
func TestProxyFlagsAreTheReadByProxyKeys(t *testing.T) {
	// A parent proxy from the environment is not a key's doing.
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"} {
		t.Setenv(v, "")
	}
	m := &Manager{}
	flagsOf := func(file []byte) any {
		t.Helper()
		cfg, err := settings.Parse(file)
		if err != nil {
			t.Fatal(err)
		}
		ec := m.egressConfig(cfg)
		return ec.ProxyFlags()
	}
	base := flagsOf((&settings.Key{Path: "network.strictAllowlist", Example: "false"}).ExampleFile())
	passed := 0
	for _, k := range settings.Keys {
		file := k.ExampleFile()
		if file == nil || k.NotYet != "" || !strings.HasPrefix(k.Path, "network.") {
			continue
		}
		changed := !reflect.DeepEqual(flagsOf(file), base)
		if changed != (k.StartOnly == settings.ReadByProxy) {
			t.Errorf("%s: srt-proxy's flags change: %v; settings.Keys says it is read by %q", k.Path, changed, k.StartOnly)
		}
		if changed {
			passed++
		}
	}
	if passed < 7 {
		t.Errorf("only %d keys change srt-proxy's flags", passed)
	}
}
