//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskSettingsErrors: every refusal of the credentials block, through
// the command line. The cases are the conformance examples
// (shared/settings-examples/invalid/credentials-*.json, whose .expect
// files, the settings package's tests require, hold every message the
// validator can give): srt exits 1 before running anything, stdout
// empty, and stderr holds exactly the issues of the .expect, in its
// order, and the line saying that srt will not fall back on defaults.
func TestMaskSettingsErrors(t *testing.T) {
	examples, _ := filepath.Glob("../../../shared/settings-examples/invalid/credentials-*.json")
	if len(examples) < 15 {
		t.Fatalf("found %d credentials examples, want the 17 or more of shared/settings-examples/invalid", len(examples))
	}
	forEach(t, func(t *testing.T, w *workspace) {
		for _, ex := range examples {
			name := strings.TrimSuffix(filepath.Base(ex), ".json")
			body, err := os.ReadFile(ex)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := os.ReadFile(strings.TrimSuffix(ex, ".json") + ".expect")
			if err != nil {
				t.Fatal(err)
			}
			var issues []string
			for _, l := range strings.Split(strings.TrimRight(string(exp), "\n"), "\n") {
				if !strings.HasPrefix(l, "#") {
					issues = append(issues, l)
				}
			}
			s := w.write(name+".json", string(body))
			r := w.srtEnv([]string{"TOKEN=t0ken-value"}, "-s", s, "-c", "touch "+w.path("ran"))
			want := "srt: " + s + " does not hold a valid config — " + strings.Join(issues, "; ") + "\n"
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if r.code != 1 || r.stdout != "" || first+"\n" != want ||
				!strings.HasPrefix(rest, "Refusing to run with the built-in defaults, which would drop this file's rules") || strings.Count(rest, "\n") != 1 {
				t.Errorf("%s: got %s\nwant exit 1 and stderr\n%sRefusing to run with the built-in defaults, …", name, r, want)
			}
			if exists(w.path("ran")) {
				t.Fatalf("%s: the command ran", name)
			}
		}
	})
}
