//go:build linux

package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestControlFDLiveUpdate streams settings to --control-fd while the
// command runs: a garbage line is reported and ignored, and a line that
// allows other.test turns its 403 into a 502 (allowed, unreachable) for the
// next connection. srt applies a line before it says so under -d (issue
// 14, item 14: it used to say so, and return, before the decider had the
// lists, so a writer could not know when they were in force); the line is
// large (150 000 entries, which the decider takes a while to parse), and
// the next connection follows the debug line at once. srt says, under -d,
// when it listens, as the reference does (its tests wait for the line),
// and the command's descriptor 3 is a read-only /dev/null (item 18).
func TestControlFDLiveUpdate(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`)
		script := curlCode + `http://other.test/; echo first-done; while [ ! -e go ]; do sleep 0.01; done; ` + curlCode + `http://other.test/; ls -l /proc/self/fd/3 | sed 's/.*-> //'; echo x >&3 || echo fd3-refused`
		out, errs := &syncBuffer{}, &syncBuffer{}
		cmd, wr := w.startControlled([]string{"SRT_DEBUG=1"}, out, errs, "-s", s, "-c", script)
		waitFor(t, func() bool { return strings.Contains(out.String(), "first-done") }, "the first request:\n"+out.String())
		if !strings.Contains(errs.String(), "srt: debug: Listening for config updates on fd 3\n") {
			t.Errorf("no debug line saying srt listens on fd 3:\n%.3000s", errs.String())
		}
		wr.Write([]byte("{garbage\n\n"))
		var list strings.Builder
		for i := 0; i < 150000; i++ {
			fmt.Fprintf(&list, `"h%d.example.com",`, i)
		}
		wr.Write([]byte(`{"network":{"allowedDomains":[` + list.String() + `"other.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}` + "\n"))
		waitFor(t, func() bool { return strings.Contains(errs.String(), "srt: debug: Config updated from control fd:") }, "the update to be applied")
		w.write("home/proj/go", "")
		waitExit(t, cmd, out)
		if got, want := out.String(), "403\nfirst-done\n502\n/dev/null\nfd3-refused\n"; got != want {
			t.Errorf("stdout %q, want %q\nstderr:\n%.3000s", got, want, errs.String())
		}
		if !strings.Contains(errs.String(), "srt: Invalid config on control fd 3: ignored, previous config still in force") {
			t.Errorf("the garbage line was not reported:\n%.3000s", errs.String())
		}
	})
}

// startControlled starts srt with the read end of a pipe on --control-fd
// 3, and returns the command and the write end (closed at the test's end).
func (w *workspace) startControlled(env []string, stdout, stderr io.Writer, args ...string) (*exec.Cmd, *os.File) {
	w.t.Helper()
	r, wr, err := os.Pipe()
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { wr.Close() })
	cmd := w.command(env, append([]string{"--control-fd", "3"}, args...)...)
	cmd.ExtraFiles = []*os.File{r}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	r.Close()
	return cmd, wr
}

func TestControlFDRefusals(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.srt("--control-fd", "2", "true"), 1, "srt: option '--control-fd <fd>' argument '2' is invalid. must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).")
		expect(t, w.srt("--control-fd", "0x10", "true"), 1, "argument '0x10' is invalid")
		expect(t, w.srt("--control-fd", "9", "true"), 1, "srt: --control-fd 9 is not usable: bad file descriptor. Refusing to run the command without the control channel it asks for.")
		// Descriptors 3 and 4, closed when srt starts, are soon the Go
		// runtime's (it keeps its cgroup CPU limit files open from before
		// main): srt must not take them for the control channel, and read
		// the runtime's file as settings lines ("Invalid config on control
		// fd 3"), nor write violations into it.
		for _, fd := range []string{"3", "4"} {
			expect(t, w.srt("--control-fd", fd, "true"), 1, "srt: --control-fd "+fd+" is not usable: bad file descriptor. Refusing to run the command without the control channel it asks for.", "!Invalid config")
			expect(t, w.srt("--violations-fd", fd, "true"), 1, "srt: --violations-fd "+fd+" is not usable: bad file descriptor")
		}
	})
}
