package settings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/settingsfile"
)

// TestDeciderKnowsEveryNetworkKey: the decider run on its own reads the
// network block with the keys it applies (settingsfile.NetworkObject) and
// refuses each of srt's other keys with its own reason
// (settingsfile.NotTheDeciders). A key added to srt's network block must be
// added there too, or the decider would call it unknown ("misspelt").
func TestDeciderKnowsEveryNetworkKey(t *testing.T) {
	var keys []string // every key of the network block the checker knows
	for _, p := range sectionKeys() {
		if k, ok := strings.CutPrefix(p, "network."); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) < 20 {
		t.Fatalf("found only %d network keys (%q); is sectionKeys broken?", len(keys), keys)
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
		// The decider reads its own keys; any other it must refuse with a
		// reason of its own, not as unknown.
		_, err := settingsfile.ParseDecider([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[],"` + k + `":null}}`))
		if err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("network.%s: srt's key is not in settingsfile.NotTheDeciders; say there why the decider does not apply it (the decider says: %v)", k, err)
		}
	}
	for k := range settingsfile.NotTheDeciders {
		if !known[k] {
			t.Errorf("settingsfile.NotTheDeciders names %q, which is not a key of srt's network block", k)
		}
	}
}

// FuzzDeciderAgrees: a network block of the decider's keys alone is judged
// the same by srt (in a settings file) and by the decider (in its own
// file): the same issues, in the same order, or the same lists.
func FuzzDeciderAgrees(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `null`, `{"allowedDomains":[],"deniedDomains":[]}`,
		`{"allowedDomains":["a.example","*.com",1],"deniedDomains":["*"],"deniedDomainReasons":{"*":"","x":2},"strictAllowlist":1,"deniedResolvedAddresses":["10.0.0.0/8","x"]}`,
		`{"allowedDomains":["[::1]:443","localhost"],"deniedDomains":["b.example:22"],"allowedDomain":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, block []byte) {
		v, err := settingsfile.Parse(block)
		if err != nil {
			return
		}
		if v.Kind == kindObject {
			for _, m := range v.Obj {
				if _, theirs := settingsfile.NotTheDeciders[m.Key]; theirs {
					return // the decider refuses it; srt checks it
				}
			}
		}
		n, derr := settingsfile.ParseDecider([]byte(`{"network":` + string(block) + `}`))
		cfg, serr := Parse([]byte(`{"network":` + string(block) + `,"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
		if (derr == nil) != (serr == nil) {
			t.Fatalf("the decider says %v, srt says %v", derr, serr)
		}
		if derr == nil {
			if !reflect.DeepEqual(*n, cfg.Network.Network) {
				t.Fatalf("the decider reads %+v, srt %+v", *n, cfg.Network.Network)
			}
			return
		}
		if derr.Error() != serr.Error() {
			t.Fatalf("the decider: %v\nsrt:         %v", derr, serr)
		}
	})
}
