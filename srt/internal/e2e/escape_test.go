//go:build linux

package e2e

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The escape suite: each test runs the probe (./probe) inside a sandbox,
// as root and as the unprivileged user, and asserts the exact refusal of
// every attack; each refusal has a control that runs the same attack code
// where the protection is lifted (an opt-out setting, a namespace the probe
// makes itself, or no sandbox at all), so that a pass cannot come from a
// broken probe.

// probeBin builds the probe into bin (world-readable, like srt) once.
func probeBin(t *testing.T) string { return helperBin(t, "probe") }

// probeRun is a finished probe run: the process's result and the probe's
// RESULT lines by step.
type probeRun struct {
	result
	steps map[string]string
}

func newProbeRun(r result) probeRun {
	p := probeRun{result: r, steps: map[string]string{}}
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "RESULT" {
			p.steps[f[1]] = f[2]
		}
	}
	return p
}

// probe runs the probe as the runner inside a sandbox with the given
// settings.
func (w *workspace) probe(settingsJSON string, args ...string) probeRun {
	w.t.Helper()
	return newProbeRun(w.srt(append([]string{"-s", w.settings(settingsJSON), "--", probeBin(w.t)}, args...)...))
}

// probeShell runs a shell command line in the sandbox; $PROBE is the probe.
func (w *workspace) probeShell(settingsJSON, command string) probeRun {
	w.t.Helper()
	return newProbeRun(w.srtEnv([]string{"PROBE=" + probeBin(w.t)}, "-s", w.settings(settingsJSON), "-c", command))
}

// hostProbe runs the probe as the runner with no sandbox: the controls
// that need the protection of the sandbox itself lifted.
func (w *workspace) hostProbe(args ...string) probeRun {
	w.t.Helper()
	cmd := exec.Command(probeBin(w.t), args...)
	cmd.Dir, cmd.Env = w.dir, w.env("TMPDIR="+w.home)
	w.asRunner(cmd)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			w.t.Fatal(err)
		}
	}
	return newProbeRun(result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()})
}

// asRunner makes cmd run as the workspace's user.
func (w *workspace) asRunner(cmd *exec.Cmd) {
	if os.Geteuid() == 0 && w.r.uid != 0 {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}
	}
}

// want fails the test unless the probe exited 0 and every step named has
// the outcome given: want(t, p, "read", "EACCES", "read-symlink", "EACCES").
func want(t *testing.T, p probeRun, stepOutcomes ...string) {
	t.Helper()
	if p.code != 0 {
		t.Fatalf("the probe did not finish: %s", p.result)
	}
	for i := 0; i+1 < len(stepOutcomes); i += 2 {
		step, outcome := stepOutcomes[i], stepOutcomes[i+1]
		if got, ok := p.steps[step]; !ok || got != outcome {
			if !ok {
				got = "(no such step)"
			}
			t.Fatalf("%s: want %s, got %s\n%s", step, outcome, got, p.result)
		}
	}
}

// noLeak fails the test if secret appears anywhere in the run's output.
func noLeak(t *testing.T, p probeRun, secret string) {
	t.Helper()
	if strings.Contains(p.stdout+p.stderr, secret) {
		t.Fatalf("ESCAPE: the secret %q leaked:\n%s", secret, p.result)
	}
}

// stepsWithPrefix returns the steps named prefix@<target>, by target.
func (p probeRun) stepsWithPrefix(prefix string) map[string]string {
	out := map[string]string{}
	for step, outcome := range p.steps {
		if target, ok := strings.CutPrefix(step, prefix+"@"); ok {
			out[target] = outcome
		}
	}
	return out
}

// procs returns the PROC lines: pid → name of the processes the probe saw.
func (p probeRun) procs() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(p.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "PROC" {
			out[f[1]] = f[2]
		}
	}
	return out
}

// hostMarker starts, as the runner and outside any sandbox, a process whose
// command line holds a unique marker, and stops it when the test ends. It
// returns the process and the marker hex-encoded for the probe (the probe's
// own arguments are visible in /proc/1/cmdline inside and must not match).
func (w *workspace) hostMarker() (*exec.Cmd, string) {
	w.t.Helper()
	marker := fmt.Sprintf("srt-escape-marker-%d", time.Now().UnixNano())
	cmd := exec.Command("/bin/sleep", "120")
	cmd.Args[0] = marker
	w.asRunner(cmd)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	w.t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	waitFor(w.t, func() bool { return processRunning(marker) }, "the host marker process to start")
	return cmd, hex.EncodeToString([]byte(marker))
}

// processAlive says whether a process we started has not exited (a zombie
// counts as exited).
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// withTop adds a top-level field to a settings document.
func withTop(settingsJSON, field string) string {
	return "{" + field + "," + strings.TrimPrefix(settingsJSON, "{")
}
