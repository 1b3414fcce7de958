package sandbox

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// TestMissingPathWarnedOnce (issue 14, item 9): an allowWrite path that
// does not exist is named on Options.Warnings, once in the Manager's life
// however many commands run; the command still runs. The control: an
// existing path draws no warning.
func TestMissingPathWarnedOnce(t *testing.T) {
	for _, c := range []struct {
		entry string
		warns int
	}{{"./buidl", 1}, {".", 0}} {
		dir := t.TempDir()
		cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["` + c.entry + `"],"denyWrite":[]}}`))
		if err != nil {
			t.Fatal(err)
		}
		var warnings bytes.Buffer
		m, err := New(cfg, Options{Warnings: &warnings})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			cmd, err := m.Command(context.Background(), "true", WithDir(dir))
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: the command failed: %v\n%s", c.entry, err, warnings.String())
			}
		}
		m.Close()
		line := `srt: warning: filesystem.allowWrite names paths that do not exist, so they grant nothing; make them before srt starts (a path made later stays read-only in the sandbox), or correct the entries: "./buidl" (` + filepath.Join(dir, "buidl") + ")\n"
		if n := strings.Count(warnings.String(), "do not exist"); n != c.warns || c.warns == 1 && !strings.Contains(warnings.String(), line) {
			t.Errorf("allowWrite %q over 3 commands: want %d warning(s) about missing paths, got %d:\n%s", c.entry, c.warns, n, warnings.String())
		}
	}
}
