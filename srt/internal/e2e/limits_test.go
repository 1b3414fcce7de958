//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// limitsSettings is a settings file with the limits block given.
func limitsSettings(w *workspace, limits string) string {
	return w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"limits":` + limits + `}`)
}

// limitsLine is srt's -d line saying how the limits are applied.
func limitsLine(t *testing.T, r result) string {
	t.Helper()
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "srt: debug: limits: ") {
			return l
		}
	}
	t.Fatalf("no limits debug line\n%s", r)
	return ""
}

// requireCgroup (SRT_TEST_REQUIRE_CGROUP, set by scripts/test-uml, whose
// kernel delegates a cgroup v2 with memory and pids to every srt the suite
// runs) makes the limits tests fail unless srt takes the cgroup branch.
var requireCgroup = os.Getenv("SRT_TEST_REQUIRE_CGROUP") != ""

// hostForks checks that the machine still starts processes.
func hostForks(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("sh", "-c", "echo ok").Output(); err != nil || string(out) != "ok\n" {
		t.Fatalf("the host cannot start a process after the run: %q %v", out, err)
	}
}

// forker forks children that wait until the kernel refuses a fork, says
// how many it made and why it stopped, and ends them.
const forker = `import os, errno, signal
pids = []
while len(pids) < 1000:
    try:
        pid = os.fork()
    except OSError as e:
        print("refused", errno.errorcode[e.errno], len(pids))
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    pids.append(pid)
for p in pids:
    os.kill(p, signal.SIGKILL)
    os.waitpid(p, 0)
`

// A fork bomb under processes=50 is stopped at the bound, and ends; the
// host still forks. As root without a pids cgroup, processes is refused
// before anything runs: the kernel does not apply RLIMIT_NPROC to root.
func TestLimitsForkBomb(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		skipOnLandlock(t)
		// The forker has time to reach the bound on a slow kernel (user-mode
		// Linux forks python slowly); the bomb is ended by wallSeconds.
		s := limitsSettings(w, `{"processes":50,"wallSeconds":60}`)
		w.write("home/proj/forker.py", forker)
		if w.r.uid != 0 {
			// RLIMIT_NPROC counts the sandbox's user namespace alone:
			// more processes of the user outside than the bound leave
			// the sandbox its own 50.
			for range 70 {
				c := w.command(nil)
				c.Path, c.Args = "/bin/sleep", []string{"sleep", "60"}
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Process.Kill(); c.Wait() })
			}
		}
		r := w.srt("-d", "-s", s, "-c", "touch ran; python3 forker.py")
		if requireCgroup && !strings.Contains(r.stderr, "processes 50: pids.max 66") {
			t.Fatalf("SRT_TEST_REQUIRE_CGROUP: processes not enforced by pids.max\n%s", r)
		}
		if strings.Contains(r.stderr, "limits.processes: no pids cgroup is delegated") {
			if w.r.uid != 0 || r.code != 1 || !strings.Contains(r.stderr, "the kernel does not apply RLIMIT_NPROC to root") {
				t.Fatalf("processes refused, as uid %d\n%s", w.r.uid, r)
			}
			if _, err := os.Stat(filepath.Join(w.dir, "ran")); err == nil {
				t.Fatal("the command ran although its limits were refused")
			}
			return
		}
		line := limitsLine(t, r)
		if !strings.Contains(line, "processes 50: pids.max 66") && !strings.Contains(line, "processes 50: RLIMIT_NPROC 66") {
			t.Fatalf("limits line %q", line)
		}
		m := regexp.MustCompile(`^refused EAGAIN (\d+)\n$`).FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil {
			t.Fatalf("the forker did not end at the bound\n%s", r)
		}
		// The init stage's threads and the shell count too.
		if n, _ := strconv.Atoi(m[1]); n < 30 || n > 66 {
			t.Fatalf("the forker made %d children under processes 50\n%s", n, r)
		}
		// A real bomb: it runs into the bound, and wallSeconds ends it.
		s = limitsSettings(w, `{"processes":50,"wallSeconds":3}`)
		start := time.Now()
		r = w.srt("-s", s, "-c", "bomb() { bomb | bomb & }; bomb; sleep 30")
		if r.code != 143 || !strings.Contains(r.stderr, "srt: the command ran past limits.wallSeconds (3 s) and was stopped") || time.Since(start) > 20*time.Second {
			t.Fatalf("the fork bomb did not end clearly in %s\n%s", time.Since(start), r)
		}
		hostForks(t)
	})
}

// A memory hog under memoryMiB=100 fails: MemoryError under RLIMIT_DATA,
// the out-of-memory killer in a memory cgroup, which srt reports.
func TestLimitsMemoryHog(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := limitsSettings(w, `{"memoryMiB":100}`)
		// Written, not just reserved: a cgroup charges the pages used.
		r := w.srt("-d", "-s", s, "-c", `python3 -c 'b = b"x" * (1 << 30); print("allocated")'`)
		line := limitsLine(t, r)
		if requireCgroup && !strings.Contains(line, "memoryMiB 100: memory.max") {
			t.Fatalf("SRT_TEST_REQUIRE_CGROUP: memoryMiB not enforced by memory.max\n%s", r)
		}
		switch {
		case strings.Contains(line, "memoryMiB 100: RLIMIT_DATA of each process"):
			if r.code != 1 || !strings.Contains(r.stderr, "MemoryError") || strings.Contains(r.stdout, "allocated") {
				t.Fatalf("the hog was not refused its memory\n%s", r)
			}
		case strings.Contains(line, "memoryMiB 100: memory.max"):
			if r.code != 137 || !strings.Contains(r.stderr, "srt: the sandbox reached limits.memoryMiB (100 MiB)") {
				t.Fatalf("the hog was not killed\n%s", r)
			}
		default:
			t.Fatalf("limits line %q", line)
		}
		hostForks(t)
	})
}

// TMPDIR is a tmpfs of tmpdirMiB: a write past it fails with ENOSPC, and
// the rest of /dev, read-only, is no way around it. Without the limit it
// has the default size.
func TestLimitsTmpdir(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := limitsSettings(w, `{"tmpdirMiB":8}`)
		r := w.srt("-d", "-s", s, "-c", `dd if=/dev/zero of="$TMPDIR/f" bs=1M count=20 2>&1; stat -c %s "$TMPDIR/f"; touch /dev/x; echo > /dev/null && echo null-ok`)
		if !strings.Contains(limitsLine(t, r), "tmpdirMiB 8: the size of TMPDIR's tmpfs") ||
			!strings.Contains(r.stdout, "No space left on device") || !strings.Contains(r.stdout, "\n8388608\n") ||
			!strings.Contains(r.stderr, "/dev/x': Read-only file system") || !strings.HasSuffix(r.stdout, "null-ok\n") {
			t.Fatalf("TMPDIR did not fill up at 8 MiB\n%s", r)
		}
		var si syscall.Sysinfo_t
		syscall.Sysinfo(&si)
		want := min(uint64(si.Totalram)*uint64(si.Unit)/4, 4<<30)
		r = w.srt("-s", limitsSettings(w, `{}`), "-c", `stat -f -c "%b %S" "$TMPDIR"`)
		f := strings.Fields(r.stdout)
		if len(f) != 2 {
			t.Fatalf("stat\n%s", r)
		}
		blocks, _ := strconv.ParseUint(f[0], 10, 64)
		size, _ := strconv.ParseUint(f[1], 10, 64)
		// tmpfs rounds the size up to whole pages.
		if got := blocks * size; got < want || got-want >= 4096 {
			t.Fatalf("TMPDIR's default size is %d bytes, want %d\n%s", got, want, r)
		}
	})
}

// openFiles, cpuSeconds and wallSeconds bound each what they name.
func TestLimitsRlimitsAndWall(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		r := w.srt("-d", "-s", limitsSettings(w, `{"openFiles":20}`), "-c", `python3 -c '
import errno
fs = []
try:
    while len(fs) < 100:
        fs.append(open("/dev/null"))
except OSError as e:
    print(errno.errorcode[e.errno], len(fs))'`)
		if !strings.Contains(limitsLine(t, r), "openFiles 20: RLIMIT_NOFILE") || !regexp.MustCompile(`^EMFILE 1[0-7]\n$`).MatchString(r.stdout) {
			t.Fatalf("openFiles 20\n%s", r)
		}

		start := time.Now()
		r = w.srt("-s", limitsSettings(w, `{"cpuSeconds":1}`), "-c", `python3 -c 'while True: pass'`)
		if r.code != 128+int(syscall.SIGXCPU) || time.Since(start) > 15*time.Second {
			t.Fatalf("cpuSeconds 1: a busy loop ended after %s\n%s", time.Since(start), r)
		}

		start = time.Now()
		r = w.srt("-s", limitsSettings(w, `{"wallSeconds":1}`), "-c", "sleep 30")
		if r.code != 143 || !strings.Contains(r.stderr, "srt: the command ran past limits.wallSeconds (1 s) and was stopped") || time.Since(start) > 5*time.Second {
			t.Fatalf("wallSeconds 1: sleep 30 ended after %s\n%s", time.Since(start), r)
		}
		// A command that ignores SIGTERM is killed after the grace.
		start = time.Now()
		r = w.srt("-s", limitsSettings(w, `{"wallSeconds":1}`), "-c", "trap '' TERM; sleep 30; echo survived")
		if r.code != 137 || strings.Contains(r.stdout, "survived") || time.Since(start) > 10*time.Second {
			t.Fatalf("wallSeconds 1: a command ignoring SIGTERM ended after %s\n%s", time.Since(start), r)
		}
	})
}

// The leaves of an srt killed before it could remove them are removed by
// the next srt that makes one beside them. As root in the root cgroup of a
// hierarchy with memory (SRT_TEST_CGROUP_ROOT: scripts/test-uml), where
// srt makes its leaves with no cgroup of its own.
func TestLimitsCgroupSweep(t *testing.T) {
	root := os.Getenv("SRT_TEST_CGROUP_ROOT")
	if root == "" || os.Geteuid() != 0 {
		t.Skip("needs root and the root of a cgroup v2 hierarchy with memory (SRT_TEST_CGROUP_ROOT): scripts/test-uml runs it")
	}
	w := newWorkspace(t, runners(t)[0])
	s := limitsSettings(w, `{"memoryMiB":64}`)
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	inRoot := func(c *exec.Cmd) *exec.Cmd {
		if c.SysProcAttr == nil {
			c.SysProcAttr = &syscall.SysProcAttr{}
		}
		c.SysProcAttr.UseCgroupFD, c.SysProcAttr.CgroupFD = true, fd
		return c
	}
	leaves := func(pid int) []string {
		m, _ := filepath.Glob(filepath.Join(root, "srt-"+strconv.Itoa(pid)+"-*"))
		return m
	}
	a := inRoot(w.command(nil, "-s", s, "-c", "sleep 60"))
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	var left []string
	for i := 0; i < 200 && len(left) == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		left = leaves(a.Process.Pid)
	}
	if len(left) != 1 {
		a.Process.Kill()
		a.Wait()
		t.Fatalf("srt's leaf did not appear in %s: %v", root, left)
	}
	a.Process.Kill()
	a.Wait()
	if _, err := os.Stat(left[0]); err != nil {
		t.Fatalf("the killed srt's leaf is gone already (%v): nothing left to sweep", err)
	}
	r := w.run(inRoot(w.command(nil, "-s", s, "-c", "echo ran")))
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("the next srt\n%s", r)
	}
	if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
		t.Fatalf("the killed srt's leaf %s is still there after the next srt: %v", left[0], err)
	}
}
