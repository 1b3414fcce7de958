package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestControlFDLiveUpdate streams settings to --control-fd while the
// command runs: a garbage line is reported and ignored, and a line that
// allows other.test turns its 403 into a 502 (allowed, unreachable) for the
// next connection.
func TestControlFDLiveUpdate(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`)
		r, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		script := curlCode + `http://other.test/; echo first-done; while [ ! -e go ]; do sleep 0.05; done; ` + curlCode + `http://other.test/; ls -l /proc/self/fd/3 | sed 's/.*-> //'`
		cmd := w.command(nil, "-s", s, "--control-fd", "3", "-c", script)
		cmd.ExtraFiles = []*os.File{r}
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		waitFor(t, func() bool { return strings.Contains(out.String(), "first-done") }, "the first request:\n"+out.String())
		wr.Write([]byte("{garbage\n\n"))
		wr.Write([]byte(`{"network":{"allowedDomains":["other.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}` + "\n"))
		time.Sleep(300 * time.Millisecond) // the update travels srt → decider → proxy
		w.write("home/proj/go", "")
		waitExit(t, cmd, out)
		wr.Close()
		got := out.String()
		for _, want := range []string{"403\nfirst-done\n", "502\n", "/dev/null\n", "srt: Invalid config on control fd 3: ignored, previous config still in force"} {
			if !strings.Contains(got, want) {
				t.Fatalf("output lacks %q:\n%s", want, got)
			}
		}
	})
}

func TestControlFDRefusals(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.srt("--control-fd", "2", "true"), 1, "srt: option '--control-fd <fd>' argument '2' is invalid. must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).")
		expect(t, w.srt("--control-fd", "0x10", "true"), 1, "argument '0x10' is invalid")
		expect(t, w.srt("--control-fd", "9", "true"), 1, "srt: --control-fd 9 is not usable: bad file descriptor. Refusing to run the command without the control channel it asks for.")
	})
}
