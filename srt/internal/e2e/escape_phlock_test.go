//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEscapePlaceholderTwoStateDirs (second hostile review of issue 10):
// placeholders were shared only through the journals of one state
// directory, $TMPDIR/srt-<uid>, so two srt processes of one user with
// different TMPDIRs (a terminal and an IDE, a service with PrivateTmp, a
// library caller that sets TMPDIR) did not see each other's placeholders.
// B found A's placeholder of a missing ~/.bashrc, took it for a file of
// the user's and mounted on it; A ended and unlinked it, which detached
// B's mount; B then created ~/.bashrc, and it stayed on the host. Now
// every run holds a lock on the placeholders it mounts on, whatever its
// state directory: B adopts A's, A leaves it to B, and B, the last holder,
// removes it.
//
// The control unlinks the placeholder on the host while both run (what A
// did): B's mount detaches and the same write lands on the host, so a pass
// is not a broken probe.
func TestEscapePlaceholderTwoStateDirs(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		rc := w.home + "/.bashrc"

		// Control: the placeholder is unlinked on the host while B runs.
		p, content := phlockTwoStateDirs(t, w, w.phlockStateDir("ctl-a"), w.phlockStateDir("ctl-b"), func(a *exec.Cmd) {
			if err := os.Remove(rc); err != nil {
				t.Fatalf("control: removing %s on the host: %v", rc, err)
			}
		})
		if got := phlockResults(p, "create"); len(got) != 2 || got[0] != "EROFS" || got[1] != "ok" || !strings.Contains(content, "planted") {
			t.Fatalf("control: with the placeholder unlinked under it, B's second write must land on the host; writes %v, %s holds %q\n%s", got, rc, content, p.result)
		}
		os.Remove(rc)

		cases := []struct {
			name       string
			stateA     string
			stateB     string
			endA       func(a *exec.Cmd)
			aLeftFiles bool // A's journal may name the placeholder after A ended
		}{
			// One state directory: the journals already shared it.
			{"one state directory", w.phlockStateDir("tmp-shared"), "", nil, false},
			// The finding: A ends normally and must leave it to B.
			{"two state directories", w.phlockStateDir("tmp-a"), w.phlockStateDir("tmp-b"), nil, true},
			// A is killed: its locks go with it, B still holds, and B
			// removes the placeholder when it ends.
			{"two state directories, A killed", w.phlockStateDir("kill-a"), w.phlockStateDir("kill-b"), func(a *exec.Cmd) {
				a.Process.Signal(syscall.SIGKILL)
			}, true},
		}
		for _, c := range cases {
			stateB := c.stateB
			if stateB == "" {
				stateB = c.stateA
			}
			p, content := phlockTwoStateDirs(t, w, c.stateA, stateB, c.endA)
			got := phlockResults(p, "create")
			if len(got) != 2 || got[0] != "EROFS" {
				t.Fatalf("%s: B's first write (A's placeholder in place) must fail with EROFS, got %v\n%s", c.name, got, p.result)
			}
			if got[1] != "EROFS" || strings.Contains(content, "planted") {
				t.Errorf("%s: ESCAPE: after the other srt ended, the sandbox wrote %s, left on the host: %q (writes: %v)\n%s", c.name, rc, content, got, p.result)
			}
			// B, the last holder, removed the placeholder it adopted.
			if exists(rc) {
				t.Errorf("%s: the placeholder %s was left on the host after both runs", c.name, rc)
			}
			os.Remove(rc)
		}
	})
}

// phlockTwoStateDirs runs the placeholder race between two srt processes
// of the same user: A holds the placeholder of a missing ~/.bashrc; B,
// started while it is there, writes ~/.bashrc, then A ends (or endA is
// done instead of letting it end), and B writes ~/.bashrc again. stateA
// and stateB are the TMPDIRs (state directories) of the two. While B runs,
// it checks that no process of B's sandbox holds a descriptor of the
// placeholder: srt's own lock descriptors do not reach the sandbox.
func phlockTwoStateDirs(t *testing.T, w *workspace, stateA, stateB string, endA func(a *exec.Cmd)) (p probeRun, content string) {
	t.Helper()
	goA, goB := filepath.Join(w.root, "go-a"), filepath.Join(w.root, "go-b")
	os.Remove(goA)
	os.Remove(goB)
	rc, aRuns := w.home+"/.bashrc", w.home+"/a-runs"
	os.Remove(aRuns)
	a := w.command([]string{"TMPDIR=" + stateA}, "-s", w.settings(homeWritable), "-c",
		`touch `+aRuns+`; while [ ! -e `+goA+` ]; do sleep 0.05; done`)
	aOut := &syncBuffer{}
	a.Stdout, a.Stderr = aOut, aOut
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { a.Process.Kill(); a.Wait() }()
	waitFor(t, func() bool { return exists(aRuns) }, "A's command to run")
	if !exists(rc) {
		t.Fatalf("A made no placeholder at %s\n%s", rc, aOut)
	}
	b := w.command([]string{"TMPDIR=" + stateB, "PROBE=" + probeBin(t)}, "-s", w.write("settings-b.json", homeWritable), "-c",
		`"$PROBE" write-file `+rc+` before; while [ ! -e `+goB+` ]; do sleep 0.05; done; "$PROBE" write-file `+rc+` 'touch /tmp/pwned # planted'`)
	bOut, bErr := &syncBuffer{}, &syncBuffer{}
	b.Stdout, b.Stderr = bOut, bErr
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { b.Process.Kill(); b.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !strings.Contains(bOut.String(), "RESULT create"); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(bOut.String(), "RESULT create") {
		t.Fatalf("B did not write in 30 s: stdout %q stderr %q", bOut.String(), bErr.String())
	}
	phlockNoLeak(t, b.Process.Pid, rc)
	if endA != nil {
		endA(a)
	}
	// A ends (if it still runs), and lets go of the placeholder it made.
	os.WriteFile(goA, nil, 0o644)
	waitExit(t, a, aOut)
	os.WriteFile(goB, nil, 0o644)
	waitExit(t, b, bErr)
	data, _ := os.ReadFile(rc)
	return newProbeRun(result{stdout: bOut.String(), stderr: bErr.String(), code: b.ProcessState.ExitCode()}), string(data)
}

// phlockNoLeak fails the test when a descendant of srt process pid (the
// bubblewrap and sandbox processes) holds a descriptor of path, or when
// srt itself holds none (then the scan would prove nothing: srt holds the
// placeholder it mounts on for the whole run).
func phlockNoLeak(t *testing.T, pid int, path string) {
	t.Helper()
	parents := map[int]int{}
	holders := map[int]bool{}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 {
				parents[n], _ = strconv.Atoi(f[1])
			}
		}
		fds, _ := os.ReadDir("/proc/" + e.Name() + "/fd")
		for _, fd := range fds {
			if target, err := os.Readlink("/proc/" + e.Name() + "/fd/" + fd.Name()); err == nil && target == path {
				holders[n] = true
			}
		}
	}
	if !holders[pid] {
		t.Fatalf("srt (pid %d) holds no descriptor of %s while its sandbox mounts on it", pid, path)
	}
	for h := range holders {
		for p := parents[h]; p > 1; p = parents[p] {
			if p == pid {
				t.Errorf("process %d in srt %d's sandbox holds a descriptor of the placeholder %s", h, pid, path)
				break
			}
		}
	}
}

// phlockResults lists a probe run's RESULT lines for one step, in order.
func phlockResults(p probeRun, step string) []string {
	var out []string
	for _, line := range strings.Split(p.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "RESULT" && f[1] == step {
			out = append(out, f[2])
		}
	}
	return out
}

// phlockStateDir makes a TMPDIR for srt owned by the runner, mode 0700.
func (w *workspace) phlockStateDir(rel string) string {
	p := w.mkdir(rel)
	os.Chmod(p, 0o700)
	return p
}
