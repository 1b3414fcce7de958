//go:build linux

package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoBackendAtAll: under "auto", with bubblewrap not installed and a
// kernel without Landlock, srt refuses, naming both reasons and what to
// do about each.
func TestNoBackendAtAll(t *testing.T) {
	nowhere := filepath.Join(t.TempDir(), "bwrap")
	cfg := cfgOf(t, `,"bwrapPath":"`+nowhere+`","allowWeaker":["root"]`)
	for _, k := range []kernelLayers{noLandlock, landlockOff} {
		_, err := chooseBackend(cfg, k)
		if !errors.Is(err, ErrCannotSandbox) {
			t.Fatalf("want ErrCannotSandbox, got %v", err)
		}
		for _, want := range []string{"srt has no backend that can run here", "bubblewrap (bwrapPath " + nowhere + ") cannot be used",
			"its Landlock backend cannot either (srt's Landlock backend needs Landlock, and this kernel has none", landlockHint(k.landlockErr),
			"install bubblewrap where user namespaces are allowed (scripts/install", "or run on a kernel with Landlock enabled"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal lacks %q:\n%v", want, err)
			}
		}
	}
	// With Landlock there, the same machine runs the Landlock backend.
	be, err := chooseBackend(cfg, withLandlock)
	if err != nil || be.name != "landlock" || !strings.HasPrefix(be.announce, "bubblewrap cannot be used (bubblewrap (bwrapPath "+nowhere) {
		t.Errorf("with Landlock: %+v %v", be, err)
	}
}
