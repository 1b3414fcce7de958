//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin holds the binaries built for this test run.
var bin string

func TestMain(m *testing.M) {
	if dir := os.Getenv("SRT_E2E_BIN"); dir != "" {
		// Built beforehand (scripts/test-uml: the suite runs in a
		// kernel of its own, where nothing can be built).
		bin = dir
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "srt-e2e-bin-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	bin = dir
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", dir+"/", "github.com/srt-sandbox/srt/cmd/srt", "github.com/srt-sandbox/srt/cmd/srt-init",
		"github.com/srt-sandbox/decider/cmd/decider", "github.com/srt-sandbox/srt-proxy/cmd/srt-proxy", "github.com/srt-sandbox/srt/internal/e2e/subreaper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building srt:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runner is a user the sandbox runs as.
type runner struct {
	name     string
	uid, gid int
}

// runners returns the users every case runs as: root and the unprivileged
// test user when the tests run as root, else the current user.
func runners(t *testing.T) []runner {
	if os.Geteuid() != 0 {
		u, _ := user.Current()
		t.Logf("not root: running as %s only (run the tests as root to also cover root and the unprivileged test user)", u.Username)
		return []runner{{name: u.Username, uid: os.Getuid(), gid: os.Getgid()}}
	}
	name := os.Getenv("SRT_TEST_USER")
	if name == "" {
		name = "srt-test"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("unprivileged test user %q does not exist (scripts/test creates it): %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return []runner{{name: "root", uid: 0, gid: 0}, {name: name, uid: uid, gid: gid}}
}

// forEach runs f as every runner, each in a fresh workspace.
func forEach(t *testing.T, f func(t *testing.T, w *workspace)) {
	for _, r := range runners(t) {
		r := r
		t.Run(r.name, func(t *testing.T) {
			f(t, newWorkspace(t, r))
		})
	}
}

// workspace is a scratch home and working directory owned by the runner.
type workspace struct {
	t    *testing.T
	r    runner
	root string // parent of home and work
	home string
	dir  string // working directory of the command
}

func newWorkspace(t *testing.T, r runner) *workspace {
	root, err := os.MkdirTemp("", "srt-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &workspace{t: t, r: r, root: root, home: filepath.Join(root, "home"), dir: filepath.Join(root, "home", "proj")}
	w.mkdir("home/proj")
	return w
}

// path makes a workspace-relative path absolute.
func (w *workspace) path(rel string) string { return filepath.Join(w.root, rel) }

func (w *workspace) chown(p string) {
	if os.Geteuid() == 0 {
		os.Lchown(p, w.r.uid, w.r.gid)
	}
}

// mkdir creates directories (relative to the workspace root) owned by the runner.
func (w *workspace) mkdir(rel string) string {
	p := w.path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		w.t.Fatal(err)
	}
	for d := p; d != w.root && strings.HasPrefix(d, w.root); d = filepath.Dir(d) {
		w.chown(d)
	}
	return p
}

// write creates a file owned by the runner.
func (w *workspace) write(rel, content string) string {
	p := w.path(rel)
	w.mkdir(filepath.Dir(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.chown(p)
	return p
}

// symlink creates a symlink owned by the runner.
func (w *workspace) symlink(target, rel string) {
	p := w.path(rel)
	w.mkdir(filepath.Dir(rel))
	if err := os.Symlink(target, p); err != nil {
		w.t.Fatal(err)
	}
	w.chown(p)
}

// settings writes the settings file and returns its path.
func (w *workspace) settings(json string) string {
	return w.write("settings.json", json)
}

// result is a finished srt run.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// env is the environment srt runs with: a plain PATH and C messages, so
// that error texts are stable.
func (w *workspace) env(extra ...string) []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + w.home, "LC_ALL=C", "USER=" + w.r.name}
	return append(env, extra...)
}

// srt runs the srt binary as the runner, in the working directory.
func (w *workspace) srt(args ...string) result {
	return w.srtEnv(nil, args...)
}

func (w *workspace) srtEnv(env []string, args ...string) result {
	w.t.Helper()
	return w.run(w.command(env, args...))
}

// run runs an srt command prepared by command, at most 60 s.
func (w *workspace) run(cmd *exec.Cmd) result {
	w.t.Helper()
	args := cmd.Args[1:]
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		w.t.Fatalf("srt %v did not finish in 60 s\n%s%s", args, stdout.String(), stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// command prepares an srt run without starting it.
func (w *workspace) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, "srt"), append(backendArgs(), args...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env(env...)
	if os.Geteuid() == 0 && w.r.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}}
	}
	w.delegate(cmd)
	return cmd
}

// cgroupDelegate (SRT_TEST_CGROUP_DELEGATE) is a cgroup v2 directory under
// which every srt the suite runs starts alone in a cgroup of its own,
// delegated to the runner: what `systemd-run --user --scope -p
// Delegate=yes srt ...` gives a user, and what srt's limits need for their
// cgroup branch (docs/settings.md). scripts/test-uml sets it.
var cgroupDelegate = os.Getenv("SRT_TEST_CGROUP_DELEGATE")

// delegate starts cmd in a fresh cgroup under cgroupDelegate, owned by
// the runner (the directory and the files delegation hands over), and
// removes it, with what srt made in it, when the test ends.
func (w *workspace) delegate(cmd *exec.Cmd) {
	if cgroupDelegate == "" {
		return
	}
	w.t.Helper()
	dir, err := os.MkdirTemp(cgroupDelegate, "run-")
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { removeCgroup(dir) })
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(dir, f), w.r.uid, w.r.gid); err != nil {
			w.t.Fatal(err)
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { syscall.Close(fd) })
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
}

// removeCgroup removes a cgroup and the cgroups beneath it, ending what
// still runs there.
func removeCgroup(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	for range 100 {
		if err := syscall.Rmdir(dir); err != syscall.EBUSY {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sh runs a shell command string in the sandbox with the given settings.
func (w *workspace) sh(settingsJSON, command string) result {
	w.t.Helper()
	if settingsJSON == "" {
		return w.srt("-c", command)
	}
	return w.srt("-s", w.settings(settingsJSON), "-c", command)
}

// expect fails the test unless r exited with code and its output contains
// every fragment (fragments starting with "!" must be absent).
func expect(t *testing.T, r result, code int, fragments ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
	all := r.stdout + r.stderr
	for _, f := range fragments {
		if neg, ok := strings.CutPrefix(f, "!"); ok {
			// (srt's own announcement of the Landlock backend is not
			// what a test means to find absent.)
			if strings.Contains(withoutAnnouncement(all), neg) {
				t.Fatalf("output contains %q:\n%s", neg, r)
			}
			continue
		}
		if !strings.Contains(all, f) {
			t.Fatalf("output lacks %q:\n%s", f, r)
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func init() {
	if runtime.GOOS != "linux" {
		panic("e2e tests need Linux")
	}
}

// fsSettings builds a settings file with the given filesystem section and
// no network.
func fsSettings(fs string) string {
	return `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + fs + `}`
}
