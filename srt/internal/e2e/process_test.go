//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSandboxSeesItsOwnProcessesAndUID(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.sh("", "id -u; ps -e -o pid=,comm=")
		expect(t, r, 0)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if lines[0] != fmt.Sprint(w.r.uid) {
			t.Fatalf("uid inside is %s, want %d", lines[0], w.r.uid)
		}
		if len(lines) > 4 {
			t.Fatalf("the sandbox sees host processes:\n%s", r.stdout)
		}
		expect(t, w.sh("", "cat /proc/net/dev"), 0, "lo:", "!eth0")
	})
}

func TestDeniedEnvVarIsAbsent(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"credentials":{"envVars":[{"name":"DENYME","mode":"deny"}]}}`
		r := w.srtEnv([]string{"DENYME=x", "KEEPME=y"}, "-s", w.settings(s), "-c", "echo ${DENYME-unset} ${KEEPME-unset} $SANDBOX_RUNTIME")
		expect(t, r, 0)
		if r.stdout != "unset y 1\n" {
			t.Fatalf("got %q", r.stdout)
		}
	})
}

// TestSignalsReachTheCommand sends SIGTERM, SIGINT and SIGHUP to srt and
// checks the command's trap sees each, and that placeholders are gone
// afterwards.
func TestSignalsReachTheCommand(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
			s := w.settings(fsSettings(writeCwd))
			script := fmt.Sprintf(`trap 'echo got-%d; exit 7' %d; echo ready; while :; do sleep 0.05; done`, sig, sig)
			cmd := w.command(nil, "-s", s, "-c", script)
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return strings.Contains(out.String(), "ready") }, "the command to start:\n"+out.String())
			if !exists(w.path("home/proj/.bashrc")) {
				t.Fatal("expected the .bashrc placeholder while the command runs")
			}
			cmd.Process.Signal(sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 7 || !strings.Contains(out.String(), fmt.Sprintf("got-%d", sig)) {
				t.Fatalf("signal %v: exit %d, output %q", sig, code, out.String())
			}
			if exists(w.path("home/proj/.bashrc")) {
				t.Fatalf("placeholder left on the host after %v", sig)
			}
		}
	})
}

// TestSandboxDiesWithSrt kills srt with SIGKILL and checks nothing of the
// sandbox survives it, and that the next run cleans up what it left.
func TestSandboxDiesWithSrt(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(fsSettings(writeCwd))
		marker := fmt.Sprintf("srt-e2e-marker-%d", time.Now().UnixNano())
		cmd := w.command(nil, "-s", s, "-c", "echo ready; exec sleep 300 "+marker)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return strings.Contains(out.String(), "ready") }, "the command to start")
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		waitFor(t, func() bool { return !processRunning(marker) }, "the sandboxed command to die with srt")
		// The placeholder of the killed run is removed by the next run.
		expect(t, w.sh(fsSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`), "true"), 0)
		if exists(w.path("home/proj/.bashrc")) {
			t.Fatal("the next run did not clean up the killed run's placeholder")
		}
	})
}

func processRunning(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(data), marker) {
			return true
		}
	}
	return false
}

// TestNoProcessOutlivesSrt: srt reaps every process it started before it
// exits. Under a parent that is a child subreaper (a container whose PID 1
// is the agent host) an unreaped bubblewrap or init stage would otherwise
// become that parent's zombie, one more per run.
func TestNoProcessOutlivesSrt(t *testing.T) {
	up := startUpstream(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(netSettings([]string{up.addr()}, nil, ""))
		for _, c := range []struct{ name, command string }{
			{"plain", "true"},
			{"network", curlCode + "http://" + up.addr() + "/a; " + curlCode + "http://denied.test/"},
			{"background", "sleep 3119 & setsid sleep 3119 & true"},
		} {
			cmd := w.command(nil)
			cmd.Path = filepath.Join(bin, "subreaper")
			cmd.Args = []string{cmd.Path, "-n", "5", "--", filepath.Join(bin, "srt"), "-s", s, "-c", c.command}
			r := w.run(cmd)
			if r.code != 0 || strings.Contains(r.stderr, "subreaper:") {
				t.Errorf("%s: srt left processes behind (or failed):\n%s", c.name, r)
			}
		}
	})
}
