//go:build linux

package e2e

import (
	"os/exec"
	"testing"
)

// TestEscapeConcurrentPlaceholder: a sandbox that starts while another one
// runs in the same directory found the other's placeholders (.bashrc,
// .git/commondir) as existing files and mounted on them without telling
// the registry; when the first sandbox ended it removed them, which
// detached the second one's mounts, and the second wrote .bashrc. Now the
// second shares them, and the last one to end removes them.
func TestEscapeConcurrentPlaceholder(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		s := w.settings(fsSettings(writeCwd))
		start := func(command string) (*exec.Cmd, *syncBuffer) {
			cmd := w.command([]string{"PROBE=" + probeBin(t)}, "-s", s, "-c", command)
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			return cmd, out
		}
		first, firstOut := start(`while [ ! -e first-go ]; do sleep 0.05; done`)
		waitFor(t, func() bool { return exists(w.dir + "/.bashrc") }, "the first sandbox's placeholders")
		second, secondOut := start(`touch second-started; while [ ! -e second-go ]; do sleep 0.05; done
"$PROBE" plant .bashrc 'touch /tmp/pwned' | sed 's/^RESULT /RESULT bashrc-/'
"$PROBE" plant .git/commondir /tmp/evil | sed 's/^RESULT /RESULT commondir-/'
"$PROBE" plant free 'x' | sed 's/^RESULT /RESULT free-/'`)
		waitFor(t, func() bool { return exists(w.dir + "/second-started") }, "the second sandbox to start")
		w.write("home/proj/first-go", "")
		waitExit(t, first, firstOut)
		w.write("home/proj/second-go", "")
		waitExit(t, second, secondOut)
		p := newProbeRun(result{stdout: secondOut.String()})
		// Control: the same probe wrote a file nothing protects. (The second
		// sandbox found .bashrc existing: read-only, EROFS.)
		want(t, p, "free-plant", "ok")
		if p.steps["bashrc-plant"] != "EROFS" || p.steps["commondir-plant"] != "EROFS" {
			t.Fatalf("ESCAPE: after the first sandbox ended, the second wrote its protected paths:\n%s", secondOut)
		}
		for _, f := range []string{".bashrc", ".git/commondir"} {
			if exists(w.dir + "/" + f) {
				t.Errorf("placeholder %s left on the host after both runs", f)
			}
		}
	})
}
