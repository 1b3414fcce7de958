//go:build linux

package e2e

import (
	"strconv"
	"testing"
)

// TestEscapePtrace tries PTRACE_ATTACH, PTRACE_SEIZE and process_vm_readv
// on every process the command can see. Only the sandbox's are visible (a
// PID namespace with a fresh /proc); PID 1 is the init stage, which runs
// without the command's filters until it starts it and is not dumpable, so
// the kernel refuses to let the command trace or read it (EPERM).
func TestEscapePtrace(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(writeCwd)
		// A sibling in the sandbox shows the loop reaches what it may.
		// The probe starts once the sibling is sleep: until its exec it
		// is a copy of the shell, named bash.
		p := w.probeShell(s, `sleep 30 & i=0; while [ "$(cat /proc/$!/comm)" != sleep ] && [ $i -lt 2000 ]; do i=$((i+1)); done; exec "$PROBE" ptrace-all`)
		procs := p.procs()
		sibling := ""
		for pid, name := range procs {
			switch {
			case pid == "1" && name == "srt-init":
			case pid != "1" && name == "sleep":
				sibling = pid
			default:
				t.Fatalf("the probe saw a process that is not the sandbox's: %s %s\n%s", pid, name, p.result)
			}
		}
		if len(procs) != 2 || sibling == "" {
			t.Fatalf("want exactly init and the sibling sleep: %v\n%s", procs, p.result)
		}
		want(t, p, "ptrace-attach@1", "EPERM", "ptrace-seize@1", "EPERM", "vm-read@1", "EPERM",
			// Control inside: a process of the command's own is fair game.
			"ptrace-attach@"+sibling, "ok", "ptrace-seize@"+sibling, "ok", "vm-read@"+sibling, "ok")
		// Control: the probe's own child.
		want(t, w.probe(s, "ptrace-child"), "start-child", "ok",
			"ptrace-attach@child", "ok", "ptrace-seize@child", "ok", "vm-read@child", "ok")
	})
}

// TestEscapeHostProcesses looks for a host process from inside: the PID
// namespace and the fresh /proc show only the sandbox's own, and the
// command inherits no descriptor but stdio.
func TestEscapeHostProcesses(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		_, marker := w.hostMarker()
		s := fsSettings(writeCwd)
		p := w.probe(s, "proc-list", marker)
		// The probe leaves itself out: only the init stage is left.
		want(t, p, "proc-marker", "absent", "proc-count", "1")
		if procs := p.procs(); procs["1"] != "srt-init" {
			t.Fatalf("want only the init stage: %v\n%s", procs, p.result)
		}
		want(t, w.probe(s, "fds"), "fds", "0,1,2")
		// Control: outside the sandbox the probe sees the marker.
		want(t, w.hostProbe("proc-list", marker), "proc-marker", "found")
	})
}

// TestEscapeSignals signals from inside: kill(-1) reaches only the
// sandbox's processes and a host process's PID names nothing inside (the
// PID namespace), and the init stage cannot be killed from inside.
func TestEscapeSignals(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		marker, _ := w.hostMarker()
		pid := marker.Process.Pid
		s := fsSettings(writeCwd)
		// The probe's own child shows kill(-1) does kill what it can see.
		want(t, w.probe(s, "kill-all"), "start-child", "ok", "kill-all", "ok", "kill-all-child", "killed")
		if !processAlive(pid) {
			t.Fatal("ESCAPE: kill(-1) in the sandbox killed a host process")
		}
		want(t, w.probe(s, "kill", strconv.Itoa(pid), "KILL"), "kill@"+strconv.Itoa(pid), "ESRCH")
		if !processAlive(pid) {
			t.Fatal("ESCAPE: the sandbox killed a host process by its PID")
		}
		// SIGKILL to the init stage: the kernel drops it (a PID namespace's
		// init gets from inside only the signals it handles), so kill
		// succeeds and nothing happens: the command goes on and srt
		// reports its status.
		want(t, w.probe(s, "kill", "1", "KILL"), "kill@1", "ok", "after-kill", "alive")
		expect(t, w.srt("-s", w.settings(s), "-c", probeBin(t)+" kill 1 KILL; exit 42"), 42, "after-kill alive")
		// A signal the init stage handles, it forwards to the command's
		// process group, as it does srt's: the probe dies of it, and srt
		// reports 128+15.
		p := w.probe(s, "kill", "1", "TERM")
		expect(t, p.result, 143, "!after-kill")

		// Control: outside the sandbox the same code kills the marker.
		want(t, w.hostProbe("kill", strconv.Itoa(pid), "KILL"), "kill@"+strconv.Itoa(pid), "ok")
		waitFor(t, func() bool { return !processAlive(pid) }, "the marker to die")
	})
}
