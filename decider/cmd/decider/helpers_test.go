package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The black-box tests run the built decider; those with srt-proxy run the
// built srt-proxy (proxy-only mode) too, joined to the decider by a socket
// pair, with curl as the client and loopback servers as the upstreams.

var deciderBin, proxyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "decider-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	deciderBin, proxyBin = filepath.Join(dir, "decider"), filepath.Join(dir, "srt-proxy")
	root, err := findRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, b := range []struct{ out, dir, pkg string }{
		{deciderBin, filepath.Join(root, "decider"), "./cmd/decider"},
		{proxyBin, filepath.Join(root, "srt-proxy"), "./cmd/srt-proxy"},
	} {
		build := exec.Command("go", "build", "-tags=urfave_cli_no_docs", "-o", b.out, b.pkg)
		build.Dir = b.dir
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b.pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// findRoot is the checkout: the directory of go.work.
func findRoot() (string, error) {
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("go.work not found")
}

// proc is a running program whose stderr is read line by line.
type proc struct {
	t     *testing.T
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
	code  int
}

func startProc(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{t: t, cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// line is the next stderr line.
func (p *proc) line() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("%s ended (exit %d) where a line was expected", filepath.Base(p.cmd.Path), p.exitCode())
		}
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatalf("no line from %s", filepath.Base(p.cmd.Path))
	}
	return ""
}

// expect reads the next line and wants it to be want.
func (p *proc) expect(want string) {
	p.t.Helper()
	if got := p.line(); got != want {
		p.t.Fatalf("%s said\n  %q\nwant\n  %q", filepath.Base(p.cmd.Path), got, want)
	}
}

// exitCode waits for the end and returns the exit code.
func (p *proc) exitCode() int {
	select {
	case <-p.done:
		return p.code
	case <-time.After(10 * time.Second):
		p.t.Fatalf("%s is still running", filepath.Base(p.cmd.Path))
	}
	return -1
}

// rest is every line left, once the program has ended.
func (p *proc) rest() []string {
	p.exitCode()
	var out []string
	for l := range p.lines {
		out = append(out, l)
	}
	return out
}

func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
}

// writeSettings writes a decider settings file in a directory of its own.
func writeSettings(t *testing.T, doc string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// replaceFile writes doc beside path and renames it over path, as editors
// and deployment tools do.
func replaceFile(t *testing.T, path, doc string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// gate is a decider and srt-proxy serving on a loopback port.
type gate struct {
	t       *testing.T
	decider *proc
	proxy   *proc
	addr    string // srt-proxy's listener
}

// gateOpts says how to start a gate.
type gateOpts struct {
	settings string   // the decider's file
	args     []string // the decider's other options
	hosts    string   // when set, srt-proxy sees this /etc/hosts
}

// startGate starts the decider with settings and srt-proxy alone beside
// it, joined by a socket pair, and waits until both serve.
func startGate(t *testing.T, o gateOpts) *gate {
	t.Helper()
	mine, theirs := socketPair(t)
	dcmd := exec.Command(deciderBin, append([]string{"--settings", o.settings, "--proxy-fd", "3"}, o.args...)...)
	dcmd.ExtraFiles = []*os.File{mine}
	var dout bytes.Buffer
	dcmd.Stdout = &dout
	g := &gate{t: t, decider: startProc(t, dcmd)}
	t.Cleanup(func() {
		// Cleanups run last first: this one before startProc's, which
		// ends the decider. dout is read only once the decider is reaped
		// and its stdout copied.
		g.decider.cmd.Process.Kill()
		<-g.decider.done
		if dout.Len() > 0 {
			t.Errorf("the decider wrote on its stdout: %q", dout.String())
		}
	})
	port := freePort(t)
	args := []string{"--listen", "127.0.0.1:" + port, "--decider-fd", "3"}
	var pcmd *exec.Cmd
	if o.hosts != "" {
		pcmd = withHosts(t, o.hosts, proxyBin, args)
	} else {
		pcmd = exec.Command(proxyBin, args...)
	}
	pcmd.ExtraFiles = []*os.File{theirs}
	g.proxy = startProc(t, pcmd)
	mine.Close()
	theirs.Close()
	g.proxy.expect("srt proxy: serving 127.0.0.1:" + port)
	g.addr = "127.0.0.1:" + port
	return g
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// withHosts runs bin in a mount namespace of its own where hosts is bound
// over /etc/hosts; the machine's file is not touched. Run by another user
// than root, the mount namespace belongs to a user namespace of its own
// (where it is root).
func withHosts(t *testing.T, hosts, bin string, args []string) *exec.Cmd {
	t.Helper()
	f := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(f, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	unshare := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = append([]string{"--user", "--map-root-user"}, unshare...)
	}
	script := `mount --bind "$1" /etc/hosts && shift && exec "$0" "$@"`
	return exec.Command("unshare", append(append(unshare, "sh", "-c", script, bin, f), args...)...)
}

// curl runs curl through the gate; it returns what curl printed (-i: the
// head and the body) and its exit code.
func (g *gate) curl(args ...string) (string, int) {
	g.t.Helper()
	cmd := exec.Command("curl", append([]string{"-sS", "--max-time", "10", "-x", "http://" + g.addr}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			g.t.Fatalf("curl: %v", err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// upstream is a loopback HTTP server that answers every request with its
// name and records the paths it was asked for.
type upstream struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func newUpstream(t *testing.T, network, addr, name string) *upstream {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{addr: l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Method+" "+r.URL.Path)
		u.mu.Unlock()
		io.WriteString(w, name+"\n")
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return u
}

// requests are the requests the upstream has had, and forgets them.
func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.seen
	u.seen = nil
	return s
}

// port is the upstream's port.
func (u *upstream) port() string {
	_, p, _ := net.SplitHostPort(u.addr)
	return p
}

// has reports whether s holds every one of subs.
func has(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
