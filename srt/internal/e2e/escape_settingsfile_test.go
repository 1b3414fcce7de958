//go:build linux

package e2e

import (
	"os"
	"testing"
)

// TestEscapeCreateDefaultSettings: where the command may write $HOME and
// ~/.srt-settings.json does not exist, creating it would choose the rules
// of every later srt run that passes no -s. srt keeps a placeholder there
// while the sandbox runs (EACCES on open, as for every missing protected
// file; the Landlock backend: EROFS, its placeholder a read-only file),
// nothing is left afterwards, and a concurrent srt reads the
// placeholder as "no file". The existing-file cases are in
// TestReviewEscapeSettingsFile.
func TestEscapeCreateDefaultSettings(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		def := w.home + "/.srt-settings.json"
		s := fsSettings(`{"denyRead":[],"allowWrite":["~"],"denyWrite":[]}`)
		want(t, w.probe(s, "write-file", def, `{"filesystem":{"disabled":true}}`), "create", placeholderRefused())
		if exists(def) {
			t.Fatalf("ESCAPE: the sandbox left %s behind", def)
		}
		// Control: a file of any other name beside it is created.
		want(t, w.probe(s, "write-file", w.home+"/.other.json", "{}"), "create", "ok")

		// While a sandbox holds the placeholder, a plain srt (default
		// settings file) still runs, with the built-in defaults.
		cmd := w.command(nil, "-s", w.settings(s), "-c", "sleep 30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		waitFor(t, func() bool { return exists(def) }, "the placeholder at "+def)
		if fi, err := os.Stat(def); err != nil || fi.Size() != 0 {
			t.Fatalf("want an empty placeholder at %s: %v %v", def, fi, err)
		}
		r := w.srt("-c", "echo defaults; echo x > $HOME/f")
		expect(t, r, 1, "defaults", refusedText("EROFS"), "!is empty")
	})
}
