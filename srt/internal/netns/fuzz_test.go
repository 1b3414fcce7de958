//go:build linux

package netns

import (
	"strings"
	"testing"
)

// FuzzParseArgs: any argv is refused or read into a spec that renders
// back to an argv read as the same spec.
func FuzzParseArgs(f *testing.F) {
	f.Add(Flag + "\x00--proxy=127.0.0.1:3128\x00--capture\x00--loopback=[::1]:8765")
	f.Add(Flag + "\x00--proxy=[::1]:99999")
	f.Add("--srt-netns=v2")
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := parseArgs(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		again, err := parseArgs(spec.Args())
		if err != nil {
			t.Fatalf("%q: its own rendering %q is refused: %v", s, spec.Args(), err)
		}
		if strings.Join(again.Args(), "\x00") != strings.Join(spec.Args(), "\x00") {
			t.Fatalf("%q: %q != %q", s, again.Args(), spec.Args())
		}
	})
}
