//go:build linux

package e2e

import (
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlaceholdersKilledAtStart is item 5 of issue 14: srt killed with
// SIGKILL in the few milliseconds after it starts, while it makes the
// placeholders of the project's protected files, left empty files and
// directories (.bashrc, .gitconfig, .idea) in the project; the next srt
// dropped the dead run's journal but not them (4 of 20 tries). srt is
// killed at spread-out moments of its start, over and over; after the
// next run to complete, the project holds only what the user put there.
// The control: the user's own files at protected paths, an empty one
// (which looks like a placeholder) among them, survive unchanged.
func TestPlaceholdersKilledAtStart(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		users := map[string]string{
			".bashrc":   "# the user's\n",
			".zshrc":    "", // empty: shaped like a placeholder
			"README.md": "hello\n",
		}
		for name, content := range users {
			w.write("home/proj/"+name, content)
		}
		state := w.phlockStateDir("state")
		s := w.settings(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`))
		for try := 0; try < 40; try++ {
			cmd := w.command([]string{"TMPDIR=" + state}, "-s", s, "-c", "true")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(try%10) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
		expect(t, w.srtEnv([]string{"TMPDIR=" + state}, "-s", s, "-c", "echo DONE"), 0, "DONE")
		var left []string
		entries, _ := os.ReadDir(w.dir)
		for _, e := range entries {
			left = append(left, e.Name())
		}
		sort.Strings(left)
		if got, want := strings.Join(left, " "), ".bashrc .zshrc README.md"; got != want {
			t.Errorf("after the killed runs and a complete one, the project holds %q; want only the user's %q", got, want)
		}
		for name, content := range users {
			if data, err := os.ReadFile(w.dir + "/" + name); err != nil || string(data) != content {
				t.Errorf("the user's %s holds %q (%v); want %q", name, data, err, content)
			}
		}
	})
}
