//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The deployment examples in docs/examples (the systemd units, the example
// decider, the container drop-in and firewall) and the steps in
// docs/srt-proxy.md, kept true:
//
//   - TestUnitFilesVerify: systemd-analyze verify and security (offline).
//   - TestServiceSocketActivated: the service's ExecStart, parsed out of the
//     unit as systemd parses it, runs under systemd-socket-activate on
//     loopback, with the paths the unit names (installedPaths) replaced by
//     the files under test.
//   - TestServiceUnderSystemd: the docs' install steps, and systemd itself
//     running the units, in namespaces of the test's own.
//   - TestContainerEgressGate: the container recipe in network namespaces.

const examplesDir = "../../../docs/examples"

// installedPaths are the paths the service unit names, which the install
// steps in docs/srt-proxy.md put there. The test replaces each with the file
// under test; each must occur in the ExecStart.
var installedPaths = []string{
	"/usr/local/bin/srt-proxy",
	"/usr/local/lib/srt-proxy/decider.py",
	"/etc/srt-proxy/allowed-domains",
}

// deciderPaths are the paths the service's ExecStart names with the
// drop-in srt-proxy-decider.conf (the reference decider instead of
// decider.py).
var deciderPaths = []string{
	"/usr/local/bin/srt-proxy",
	"/usr/local/bin/decider",
	"/etc/srt-proxy/settings.json",
}

// deciderDropIn is the decider's drop-in for srt-proxy.service.
const deciderDropIn = "srt-proxy-decider.conf"

// serviceEnv is the environment systemd gives a system service (less what
// it adds for the unit: INVOCATION_ID, JOURNAL_STREAM, the user's names).
var serviceEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}

type unitSetting struct{ section, key, value string }

// readUnit reads a unit file (or drop-in): sections, key=value lines,
// comments, and lines continued with a trailing backslash.
func readUnit(t *testing.T, path string) []unitSetting {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []unitSetting
	section := ""
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: not a setting: %q", path, line)
			}
			out = append(out, unitSetting{section, strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return out
}

// unitValues is the list a key ends with over the files in order: an empty
// assignment resets it, as in systemd's list settings.
func unitValues(settings []unitSetting, section, key string) []string {
	var vs []string
	for _, s := range settings {
		if s.section != section || s.key != key {
			continue
		}
		if s.value == "" {
			vs = nil
		} else {
			vs = append(vs, s.value)
		}
	}
	return vs
}

// systemdArgv splits an ExecStart= value into words as systemd does, for the
// part of systemd's syntax the examples may use: words separated by
// blanks, single and double quotes, "$$" for "$" and "%%" for "%". What it
// does not implement (a prefix such as "-", backslash escapes, variables,
// specifiers, ";" between commands) is an error, so an example cannot use it
// untested.
func systemdArgv(v string) ([]string, error) {
	if v == "" || strings.ContainsAny(v[:1], "-@:+!|") {
		return nil, fmt.Errorf("ExecStart %q: a prefix, or none", v)
	}
	var (
		words []string
		word  strings.Builder
		inW   bool
		quote byte
	)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			return nil, fmt.Errorf("ExecStart: backslash escapes are not understood here")
		case c == '%':
			if i+1 >= len(v) || v[i+1] != '%' {
				return nil, fmt.Errorf("ExecStart: only %%%% of the specifiers is understood here")
			}
			i++
			word.WriteByte('%')
			inW = true
		case c == '$':
			if i+1 >= len(v) || v[i+1] != '$' {
				return nil, fmt.Errorf("ExecStart: variables are not understood here (write $$ for $)")
			}
			i++
			word.WriteByte('$')
			inW = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inW = c, true
		case c == ' ' || c == '\t':
			if inW {
				words = append(words, word.String())
				word.Reset()
				inW = false
			}
		default:
			word.WriteByte(c)
			inW = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("ExecStart: unterminated quote")
	}
	if inW {
		words = append(words, word.String())
	}
	for _, w := range words {
		if w == ";" {
			return nil, fmt.Errorf("ExecStart: one command only")
		}
	}
	return words, nil
}

func TestSystemdArgv(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`/bin/sh -c 'echo "$$x" 100%%'`, `/bin/sh|-c|echo "$x" 100%`},
		{`/bin/a  b"c d"e '' x`, `/bin/a|bc de||x`},
	} {
		got, err := systemdArgv(c.in)
		if err != nil || strings.Join(got, "|") != c.want {
			t.Errorf("%s: %q %v, want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`-/bin/a`, `/bin/a $X`, `/bin/a %n`, `/bin/a \;`, `/bin/a ; /bin/b`, `/bin/a 'b`} {
		if got, err := systemdArgv(bad); err == nil {
			t.Errorf("%s: %q, want an error", bad, got)
		}
	}
}

// serviceCommand is the service's ExecStart with the installed paths
// replaced by the files under test; allowed is the decider's list file.
func serviceCommand(t *testing.T, allowed string) []string {
	t.Helper()
	decider, err := filepath.Abs(filepath.Join(examplesDir, "decider.py"))
	if err != nil {
		t.Fatal(err)
	}
	return unitCommand(t, []string{"srt-proxy.service"}, installedPaths, []string{binary, decider, allowed})
}

// unitCommand is the ExecStart the unit files (a service and its drop-ins,
// in order) end with, with each of paths replaced by the file under test
// in repl at the same index.
func unitCommand(t *testing.T, files, paths, repl []string) []string {
	t.Helper()
	var svc []unitSetting
	for _, f := range files {
		svc = append(svc, readUnit(t, filepath.Join(examplesDir, f))...)
	}
	execs := unitValues(svc, "Service", "ExecStart")
	if len(execs) != 1 {
		t.Fatalf("%v have %d ExecStart lines, want 1", files, len(execs))
	}
	argv, err := systemdArgv(execs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range paths {
		if !regexp.MustCompile(`^[A-Za-z0-9/._-]+$`).MatchString(repl[i]) {
			t.Fatalf("%s: the test's path %q would need quoting in the command line", path, repl[i])
		}
		n := 0
		for j, w := range argv {
			n += strings.Count(w, path)
			argv[j] = strings.ReplaceAll(w, path, repl[i])
		}
		if n == 0 {
			t.Fatalf("%v: the ExecStart does not name %s (the docs' install steps name it)", files, path)
		}
	}
	if _, err := os.Stat(argv[0]); err != nil {
		t.Fatalf("the service runs %s: %v", argv[0], err)
	}
	for _, w := range argv {
		if strings.Contains(w, "/usr/bin/python3") {
			if _, err := os.Stat("/usr/bin/python3"); err != nil {
				t.Fatal("the service runs Debian's /usr/bin/python3, which is missing (scripts/test installs it)")
			}
		}
	}
	return argv
}

// listenStream is the one address the socket unit (and its drop-ins, in
// order) listens on.
func listenStream(t *testing.T, files ...string) (string, int) {
	t.Helper()
	var all []unitSetting
	for _, f := range files {
		all = append(all, readUnit(t, filepath.Join(examplesDir, f))...)
	}
	ls := unitValues(all, "Socket", "ListenStream")
	if len(ls) != 1 {
		t.Fatalf("%v listen on %q, want one address", files, ls)
	}
	host, port, err := net.SplitHostPort(ls[0])
	if err != nil {
		t.Fatalf("ListenStream=%s: %v", ls[0], err)
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s (scripts/test installs it)", tool)
		}
	}
}

// activated runs the service's command under systemd-socket-activate,
// listening on addr (the first connection execs it, as systemd starts the
// service on the first connection). prefix comes before it (ip netns exec).
func activated(t *testing.T, prefix []string, addr, allowed string) *proc {
	t.Helper()
	return activatedCommand(t, prefix, addr, serviceCommand(t, allowed))
}

// activatedCommand runs argv under systemd-socket-activate on addr.
func activatedCommand(t *testing.T, prefix []string, addr string, argv []string) *proc {
	t.Helper()
	needTools(t, "systemd-socket-activate")
	args := append(append(append([]string(nil), prefix...), "systemd-socket-activate", "-l", addr), argv...)
	p := &proc{t: t, lines: make(chan string, 256), done: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Env = serviceEnv
	startProc(t, p)
	p.expectLine("Listening on " + addr + " as 3.")
	return p
}

// activatedServing waits, after the first connection, for srt-proxy to
// serve the socket: systemd-socket-activate's own lines may come first.
func (p *proc) activatedServing() {
	p.t.Helper()
	for {
		l := p.line()
		if l == "srt proxy: serving fd 3" {
			return
		}
		if !strings.HasPrefix(l, "Communication attempt on fd 3") && !strings.HasPrefix(l, "Execing ") {
			p.t.Fatalf("stderr %q, want srt proxy: serving fd 3", l)
		}
	}
}

// deciderPid is the decider: srt-proxy's one child. It holds no socket (so
// not the listener) and its stdin and stdout are pipes.
func deciderPid(t *testing.T, pid int) int {
	t.Helper()
	return childPid(t, pid, "decider.py")
}

// childPid is the decider, srt-proxy's one child, whose command line holds
// name.
func childPid(t *testing.T, pid int, name string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	kids := strings.Fields(string(b))
	if len(kids) != 1 {
		t.Fatalf("srt-proxy (pid %d) has children %q, want the decider alone", pid, kids)
	}
	dpid, _ := strconv.Atoi(kids[0])
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", dpid))
	if !strings.Contains(string(cmdline), name) {
		t.Fatalf("srt-proxy's child is %q, not the decider", cmdline)
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", dpid))
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", dpid, fd.Name()))
		if strings.HasPrefix(target, "socket:") {
			t.Errorf("the decider holds a socket on fd %s", fd.Name())
		}
		if (fd.Name() == "0" || fd.Name() == "1") && !strings.HasPrefix(target, "pipe:") {
			t.Errorf("the decider's fd %s is %s, want a pipe", fd.Name(), target)
		}
	}
	return dpid
}

// gone waits until pid has exited (a zombie counts).
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s (pid %d) is still running", what, pid)
}

func writeAllowed(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "allowed-domains")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestUnitFilesVerify(t *testing.T) {
	needTools(t, "systemd-analyze")
	// The units as installed, the container drop-in beside them.
	dir := t.TempDir()
	drop := filepath.Join(dir, "srt-proxy.socket.d")
	if err := os.Mkdir(drop, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{
		"srt-proxy.socket":         filepath.Join(dir, "srt-proxy.socket"),
		"srt-proxy.service":        filepath.Join(dir, "srt-proxy.service"),
		"srt-proxy-container.conf": filepath.Join(drop, "container.conf"),
	} {
		b, err := os.ReadFile(filepath.Join(examplesDir, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// verify exits 0 on warnings (an unknown key, a bad value): any output
	// is a failure. It loads the drop-in too.
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", filepath.Join(dir, "srt-proxy.socket"), filepath.Join(dir, "srt-proxy.service")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The hardening, as systemd-analyze rates it offline: 2.0 or less ("OK").
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", "--no-pager", filepath.Join(dir, "srt-proxy.service")).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	}

	svc := readUnit(t, filepath.Join(dir, "srt-proxy.service"))
	for key, want := range map[string]string{"KillMode": "mixed", "DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict"} {
		if got := unitValues(svc, "Service", key); len(got) != 1 || got[0] != want {
			t.Errorf("srt-proxy.service: %s=%q, want %s", key, got, want)
		}
	}
	if host, port := listenStream(t, "srt-proxy.socket"); host != "127.0.0.1" || port != 3128 {
		t.Errorf("srt-proxy.socket listens on %s:%d", host, port)
	}

	// The service with the reference decider's drop-in: as good, and as
	// hardened (the drop-in changes ExecStart and adds ExecReload alone).
	withDecider := filepath.Join(dir, "srt-proxy.service.d")
	if err := os.Mkdir(withDecider, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(examplesDir, deciderDropIn))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withDecider, "decider.conf"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("systemd-analyze", "verify", "--man=no", filepath.Join(dir, "srt-proxy.socket"), filepath.Join(dir, "srt-proxy.service")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify with %s: %v\n%s", deciderDropIn, err, out)
	}
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", "--no-pager", filepath.Join(dir, "srt-proxy.service")).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security with %s: %v\n%s", deciderDropIn, err, out)
	}
	for _, st := range readUnit(t, filepath.Join(withDecider, "decider.conf")) {
		if st.section != "Service" || st.key != "ExecStart" && st.key != "ExecReload" {
			t.Errorf("%s sets %s.%s; it should change the command lines alone", deciderDropIn, st.section, st.key)
		}
	}
}

// The docs show the unit files, the drop-in and the firewall as they are.
func TestDocsShowExamples(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/srt-proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"srt-proxy.socket", "srt-proxy.service", "srt-proxy-container.conf", "egress-gate.nft", deciderDropIn, "decider-settings.json"} {
		b, err := os.ReadFile(filepath.Join(examplesDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "\n"+string(b)+"```\n") {
			t.Errorf("docs/srt-proxy.md does not show docs/examples/%s as it is", f)
		}
	}
	for _, path := range append(append([]string(nil), installedPaths...), deciderPaths...) {
		if !strings.Contains(string(doc), path) {
			t.Errorf("docs/srt-proxy.md does not say where %s comes from", path)
		}
	}
}

// The service's command line, as the unit has it, socket-activated on
// loopback: the example decider's verdicts, a stop by SIGTERM (KillMode=mixed
// sends it to srt-proxy alone), and a stop when the decider dies.
func TestServiceSocketActivated(t *testing.T) {
	host, _ := listenStream(t, "srt-proxy.socket")
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	allowed := writeAllowed(t, "# the test's upstream", "127.0.0.1", "*.example.test  # a comment", "!denied.example.test", "127.0.0.1")
	run := func(t *testing.T) (*proc, int) {
		addr := net.JoinHostPort(host, strconv.Itoa(freePort(t)))
		p := activated(t, nil, addr, allowed)
		p.addr = addr
		got := async(func() string {
			return p.roundTrip("GET http://" + up.addr + "/x HTTP/1.1\r\nHost: " + up.addr + "\r\n\r\n")
		})
		p.activatedServing()
		if s := up.next(t); !strings.HasPrefix(s.head, "GET /x HTTP/1.1\r\n") {
			t.Errorf("upstream got %q", s.head)
		}
		if a := await(t, got); !strings.HasPrefix(a, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(a, "\r\n\r\nhello\n") {
			t.Errorf("GET: %q", a)
		}
		return p, deciderPid(t, p.cmd.Process.Pid)
	}

	t.Run("decisions and SIGTERM", func(t *testing.T) {
		p, dpid := run(t)
		if got, want := p.roundTrip("POST http://"+up.addr+"/x HTTP/1.1\r\nHost: "+up.addr+"\r\nContent-Length: 4\r\n\r\ndata"),
			refusal(403, "Forbidden", "decider", "read-only egress: POST is not allowed", true); got != want {
			t.Errorf("POST: %q, want %q", got, want)
		}
		for _, h := range []string{"denied.example.test", "example.com"} {
			if got, want := p.roundTrip("GET http://"+h+"/ HTTP/1.1\r\nHost: "+h+"\r\n\r\n"),
				refusal(403, "Forbidden", "host_not_allowed", "Connection blocked by network allowlist", false); got != want {
				t.Errorf("GET %s: %q, want %q", h, got, want)
			}
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.expectStop("SIGTERM", 0)
		gone(t, dpid, "the decider")
	})

	t.Run("the decider dies", func(t *testing.T) {
		p, dpid := run(t)
		syscall.Kill(dpid, syscall.SIGKILL)
		p.expectStop("decider: decider closed the stream", 0)
	})
}

// netns runs "ip" with args, failing the test on an error.
func netns(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// listenIn listens on addr inside network namespace ns (a name from ip
// netns, or a path): on a thread of its own that enters ns and ends with the
// goroutine.
func listenIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	if !strings.HasPrefix(ns, "/") {
		ns = "/run/netns/" + ns
	}
	type res struct {
		l   net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread goes with the goroutine
		f, err := os.Open(ns)
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- res{nil, err}
			return
		}
		l, err := net.Listen("tcp4", addr)
		ch <- res{l, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("listening on %s in %s: %v", addr, ns, r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	return r.l
}

// upstreamOn serves l as newUpstream's upstream does.
func upstreamOn(l net.Listener, answer string) *upstream {
	u := &upstream{addr: l.Addr().String(), answer: answer, seenCh: make(chan seen, 16)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go u.serve(c)
		}
	}()
	return u
}

// curlIn runs curl in network namespace ns with env added; it returns the
// output and curl's exit code.
func curlIn(t *testing.T, ns string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "curl", "-sS", "--max-time", "10"}, args...)...)
	cmd.Env = append(append([]string(nil), serviceEnv...), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// The container recipe in network namespaces the test makes: "ctr" (the
// workload container) reaches "host" by a veth pair, whose host end is the
// bridge the docs name (egress0, with the drop-in's gateway address); "net"
// (the world outside) sits behind "host", which routes. The socket listens
// on the drop-in's address, the docs' firewall is loaded in "host", and the
// workload uses the proxy through HTTP_PROXY/http_proxy. The workload even
// has a default route through the host (as it would on a network that is
// not --internal): only the firewall keeps it from the world and from the
// host's own services.
func TestContainerEgressGate(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root, to make network namespaces (scripts/test runs it as root)")
	}
	needTools(t, "ip", "nft", "curl")
	gwHost, gwPort := listenStream(t, "srt-proxy.socket", "srt-proxy-container.conf")
	gw := net.ParseIP(gwHost).To4()
	if gw == nil {
		t.Fatalf("the drop-in listens on %s, not an IPv4 address", gwHost)
	}
	ctrAddr := net.IPv4(gw[0], gw[1], gw[2], gw[3]+1).String()
	const netAddr, netGw = "203.0.113.10", "203.0.113.1" // TEST-NET-3, in "net" only

	suffix := strconv.Itoa(os.Getpid())
	host, ctr, world := "srtp-host-"+suffix, "srtp-ctr-"+suffix, "srtp-net-"+suffix
	for _, ns := range []string{host, ctr, world} {
		netns(t, "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		netns(t, "-n", ns, "link", "set", "lo", "up")
	}
	netns(t, "-n", host, "link", "add", "egress0", "type", "veth", "peer", "name", "eth0", "netns", ctr)
	netns(t, "-n", host, "addr", "add", gwHost+"/24", "dev", "egress0")
	netns(t, "-n", host, "link", "set", "egress0", "up")
	netns(t, "-n", ctr, "addr", "add", ctrAddr+"/24", "dev", "eth0")
	netns(t, "-n", ctr, "link", "set", "eth0", "up")
	netns(t, "-n", ctr, "route", "add", "default", "via", gwHost)
	netns(t, "-n", host, "link", "add", "wan0", "type", "veth", "peer", "name", "eth0", "netns", world)
	netns(t, "-n", host, "addr", "add", netGw+"/24", "dev", "wan0")
	netns(t, "-n", host, "link", "set", "wan0", "up")
	netns(t, "-n", world, "addr", "add", netAddr+"/24", "dev", "eth0")
	netns(t, "-n", world, "link", "set", "eth0", "up")
	netns(t, "-n", world, "route", "add", "default", "via", netGw)
	netns(t, "netns", "exec", host, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")

	outside := upstreamOn(listenIn(t, world, netAddr+":80"), "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\noutside\n")
	hostSvc := upstreamOn(listenIn(t, host, net.JoinHostPort(gwHost, "8080")), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhost\n")
	direct := []string{"--noproxy", "*"}

	// Without the firewall the workload reaches both directly: the test's
	// network leaks as a container network would.
	if out, code := curlIn(t, ctr, nil, append(direct, "http://"+outside.addr+"/")...); code != 0 || out != "outside\n" {
		t.Fatalf("before the firewall, direct to the outside: exit %d, %q", code, out)
	}
	outside.next(t)
	if out, code := curlIn(t, ctr, nil, append(direct, "http://"+hostSvc.addr+"/")...); code != 0 || out != "host\n" {
		t.Fatalf("before the firewall, direct to the host's service: exit %d, %q", code, out)
	}
	hostSvc.next(t)

	// The firewall, loaded twice: it replaces its own table.
	nftFile, _ := filepath.Abs(filepath.Join(examplesDir, "egress-gate.nft"))
	var rulesets []string
	for range 2 {
		netns(t, "netns", "exec", host, "nft", "-f", nftFile)
		out, err := exec.Command("ip", "netns", "exec", host, "nft", "list", "ruleset").CombinedOutput()
		if err != nil {
			t.Fatalf("nft list ruleset: %v\n%s", err, out)
		}
		rulesets = append(rulesets, string(out))
	}
	if rulesets[0] != rulesets[1] || strings.Count(rulesets[0], "table ") != 1 {
		t.Fatalf("the ruleset after loading egress-gate.nft once:\n%s\nand twice:\n%s", rulesets[0], rulesets[1])
	}

	allowed := writeAllowed(t, netAddr)
	p := activated(t, []string{"ip", "netns", "exec", host}, net.JoinHostPort(gwHost, strconv.Itoa(gwPort)), allowed)
	proxyURL := "http://" + net.JoinHostPort(gwHost, strconv.Itoa(gwPort))
	proxyEnv := []string{"HTTP_PROXY=" + proxyURL, "http_proxy=" + proxyURL, "HTTPS_PROXY=" + proxyURL, "https_proxy=" + proxyURL}

	// Through the proxy: the decider's verdicts.
	got := async(func() string {
		out, code := curlIn(t, ctr, proxyEnv, "http://"+outside.addr+"/")
		return strconv.Itoa(code) + " " + out
	})
	p.activatedServing()
	if s := outside.next(t); !strings.HasPrefix(s.head, "GET / HTTP/1.1\r\n") {
		t.Errorf("the outside got %q", s.head)
	}
	if g := await(t, got); g != "0 outside\n" {
		t.Errorf("GET through the proxy: %q", g)
	}
	if out, _ := curlIn(t, ctr, proxyEnv, "-i", "-d", "x", "http://"+outside.addr+"/"); !strings.HasPrefix(out, "HTTP/1.1 403 Forbidden\r\n") || !strings.Contains(out, "X-Deny-Reason: decider\r\n") || !strings.HasSuffix(out, "\r\n\r\nread-only egress: POST is not allowed\n") {
		t.Errorf("POST through the proxy: %q", out)
	}
	for _, u := range []string{"http://" + hostSvc.addr + "/", "http://example.com/"} {
		if out, _ := curlIn(t, ctr, proxyEnv, "-i", u); !strings.HasPrefix(out, "HTTP/1.1 403 Forbidden\r\n") || !strings.Contains(out, "X-Deny-Reason: host_not_allowed\r\n") {
			t.Errorf("GET %s through the proxy: %q", u, out)
		}
	}
	// HTTPS without a CA for the proxy: every CONNECT is refused.
	if out, code := curlIn(t, ctr, proxyEnv, "https://"+netAddr+"/"); code == 0 || !strings.Contains(out, "403") {
		t.Errorf("HTTPS through the proxy: exit %d, %q", code, out)
	}

	// Directly: nothing gets through.
	for _, u := range []string{"http://" + outside.addr + "/", "http://" + hostSvc.addr + "/"} {
		if out, code := curlIn(t, ctr, nil, append(direct, u)...); code != 7 {
			t.Errorf("direct to %s: exit %d (want 7, could not connect), %q", u, code, out)
		}
	}
	select {
	case s := <-outside.seenCh:
		t.Errorf("the outside got a request it should not have: %q", s.head)
	case s := <-hostSvc.seenCh:
		t.Errorf("the host's service got a request: %q", s.head)
	default:
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	p.expectStop("SIGTERM", 0)
}

// docBlock is the fenced block that follows marker in docs/srt-proxy.md.
func docBlock(t *testing.T, marker string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/srt-proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), marker+"\n```sh\n")
	if !ok {
		t.Fatalf("docs/srt-proxy.md has no sh block after %s", marker)
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("unterminated block")
	}
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}

// cgroup2Root is where the cgroup v2 hierarchy is mounted.
func cgroup2Root(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, after, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(after, "cgroup2 ") {
			return strings.Fields(line)[4]
		}
	}
	t.Fatal("no cgroup2 hierarchy is mounted; systemd needs one")
	return ""
}

// removeCgroups removes dir and the cgroups under it, deepest first, once
// their processes are gone.
func removeCgroups(dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		failed := false
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				failed = true
			}
		}
		if !failed || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// machine is the machine's systemd booted as PID 1 in namespaces of the
// test's own (pid, mount, cgroup, network, uts, ipc), with /etc and /var as
// overlays and /run, /tmp, /usr/local/bin and /usr/local/lib as tmpfs, so
// the machine's files are not touched; the examples are in
// /run/srt-test/repo/docs/examples. It is stopped when the test ends.
type machine struct {
	pid  string                               // systemd's
	in   func(args ...string) (string, error) // runs a command in its namespaces
	must func(args ...string) string          // in, failing the test on an error
}

// bootSystemd boots it, with the files of staged (name: the host's path)
// in /run/srt-test.
func bootSystemd(t *testing.T, staged map[string]string) *machine {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root, to boot systemd in namespaces of its own (scripts/test runs it as root)")
	}
	needTools(t, "unshare", "nsenter")
	const systemd = "/lib/systemd/systemd"
	if _, err := os.Stat(systemd); err != nil {
		t.Fatalf("this test needs systemd (%s): %v (scripts/test installs it)", systemd, err)
	}
	stage := t.TempDir()
	for name, src := range staged {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stage, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	examples, _ := filepath.Abs(examplesDir)

	cg := filepath.Join(cgroup2Root(t), "srt-proxy-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroups(cg) })

	// Inside the new namespaces, before systemd: private mounts, the files
	// the install steps need staged in /run/srt-test (/tmp is covered),
	// and the test's target and drop-ins.
	inner := `set -e
mount --make-rprivate /
mount -t proc proc /proc
mount -t tmpfs tmpfs /run
mkdir -p /run/srt-test/repo/docs /run/srt-test/o/etc /run/srt-test/o/etc.w /run/srt-test/o/var /run/srt-test/o/var.w
cp -r "$SRT_STAGE"/. /run/srt-test/
cp -r "$SRT_EXAMPLES" /run/srt-test/repo/docs/examples
mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/srt-test/o/etc,workdir=/run/srt-test/o/etc.w /etc
mount -t overlay overlay -o lowerdir=/var,upperdir=/run/srt-test/o/var,workdir=/run/srt-test/o/var.w /var
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /usr/local/bin
mount -t tmpfs tmpfs /usr/local/lib
mount -t tmpfs tmpfs /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
rm -rf /etc/systemd/system/*
mkdir -p /etc/systemd/system/srt-proxy.socket.d /etc/systemd/system/srt-proxy.service.d
printf '[Unit]\nDefaultDependencies=no\n' >/etc/systemd/system/srt-proxy.socket.d/test.conf
printf '[Unit]\nDefaultDependencies=no\n' >/etc/systemd/system/srt-proxy.service.d/test.conf
printf '[Unit]\nDescription=srt-proxy test\nDefaultDependencies=no\nWants=systemd-journald.socket systemd-journald.service\n' >/etc/systemd/system/srt-proxy-test.target
export container=srt-proxy-test
exec ` + systemd + ` --system --unit=srt-proxy-test.target --log-target=console
`
	var log strings.Builder
	cmd := exec.Command("bash", "-c", `echo $$ >"$SRT_CGROUP/cgroup.procs" && exec unshare --kill-child --pid --mount --cgroup --net --uts --ipc bash -c "$SRT_INNER"`)
	cmd.Env = append(append([]string(nil), serviceEnv...), "SRT_CGROUP="+cg, "SRT_INNER="+inner, "SRT_STAGE="+stage, "SRT_EXAMPLES="+examples)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	var pid string // systemd's
	t.Cleanup(func() {
		if t.Failed() && pid != "" {
			out, _ := exec.Command("nsenter", "-t", pid, "-m", "-p", "--", "journalctl", "--no-pager", "-o", "short-precise", "-u", "srt-proxy.socket", "-u", "srt-proxy.service").CombinedOutput()
			t.Logf("the journal:\n%s", out)
		}
		// unshare ignores SIGTERM; killed, it takes systemd (--kill-child),
		// and with it every process in its namespace.
		cmd.Process.Kill()
		<-exited
		if t.Failed() && log.Len() > 0 {
			t.Logf("systemd's console:\n%s", log.String())
		}
	})

	// systemd's pid: unshare's child.
	for deadline := time.Now().Add(10 * time.Second); pid == ""; {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if kids := strings.Fields(string(b)); len(kids) == 1 {
			if exe, _ := os.Readlink("/proc/" + kids[0] + "/exe"); strings.HasSuffix(exe, "/systemd") {
				pid = kids[0]
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemd did not start:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := &machine{pid: pid}
	// in runs a command in systemd's namespaces.
	m.in = func(args ...string) (string, error) {
		c := exec.Command("nsenter", append([]string{"-t", pid, "-m", "-p", "-n", "-C", "-u", "-i", "--"}, args...)...)
		c.Env = serviceEnv
		out, err := c.CombinedOutput()
		return string(out), err
	}
	m.must = func(args ...string) string {
		t.Helper()
		out, err := m.in(args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if out, _ := m.in("systemctl", "is-active", "srt-proxy-test.target"); strings.TrimSpace(out) == "active" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemd did not reach its target:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return m
}

// The units installed by the docs' steps and run by systemd itself: the
// machine's systemd (Debian 12's, 252) boots as PID 1 in namespaces the
// test makes (pid, mount, cgroup, network, uts, ipc), with /etc and /var as
// overlays and /run, /tmp, /usr/local/bin and /usr/local/lib as tmpfs, so
// the machine's files are not touched. Two test-only drop-ins set
// DefaultDependencies=no on the units: otherwise the socket would pull in
// sysinit.target, and with it the machine's early-boot services. The rest
// — DynamicUser and every hardening setting, KillMode=mixed, the journal —
// is as the unit says.
func TestServiceUnderSystemd(t *testing.T) {
	needTools(t, "curl", "install")
	// The docs' install steps; the build is replaced by the binary under test.
	install := docBlock(t, "<!-- tested: install -->")
	built := false
	build := regexp.MustCompile(`^CGO_ENABLED=0 go build -tags=urfave_cli_no_docs( -trimpath)? -o /usr/local/bin/srt-proxy \./srt-proxy/cmd/srt-proxy$`)
	for i, l := range install {
		if build.MatchString(l) {
			install[i], built = "install -m 755 /run/srt-test/srt-proxy /usr/local/bin/srt-proxy", true
		}
	}
	if !built {
		t.Fatalf("the docs' install steps do not build /usr/local/bin/srt-proxy as the test expects:\n%s", strings.Join(install, "\n"))
	}
	m := bootSystemd(t, map[string]string{"srt-proxy": binary})
	in, must, pid := m.in, m.must, m.pid

	// The docs' steps, then the test's upstream added to the decider's list.
	must("bash", "-euxc", "cd /run/srt-test/repo\n"+strings.Join(install, "\n"))
	must("sh", "-c", "echo 127.0.0.1 >>/etc/srt-proxy/allowed-domains")
	if out, _ := in("systemctl", "is-active", "srt-proxy.socket", "srt-proxy.service"); out != "active\ninactive\n" {
		t.Fatalf("after the install steps: %q, want the socket active and the service not yet started", out)
	}
	up := upstreamOn(listenIn(t, "/proc/"+pid+"/ns/net", "127.0.0.1:0"), "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
	curl := func(args ...string) string {
		out, _ := in(append([]string{"curl", "-sS", "--max-time", "10", "-x", "http://127.0.0.1:3128"}, args...)...)
		return out
	}
	journal := func() string {
		return must("journalctl", "--no-pager", "-o", "cat", "-u", "srt-proxy.service")
	}
	mainPid := func() string {
		return strings.TrimSpace(must("systemctl", "show", "-P", "MainPID", "srt-proxy.service"))
	}
	status := func(pid string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(must("cat", "/proc/"+pid+"/status"), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				m[k] = strings.TrimSpace(v)
			}
		}
		return m
	}

	if got := curl("http://" + up.addr + "/x"); got != "hello\n" {
		t.Fatalf("GET: %q\n%s", got, journal())
	}
	up.next(t)
	if got := curl("-i", "-d", "x", "http://"+up.addr+"/x"); !strings.Contains(got, "X-Deny-Reason: decider\r\n") || !strings.HasSuffix(got, "\r\n\r\nread-only egress: POST is not allowed\n") {
		t.Errorf("POST: %q", got)
	}
	if got := curl("-i", "http://example.net/"); !strings.Contains(got, "X-Deny-Reason: host_not_allowed\r\n") {
		t.Errorf("GET example.net: %q", got)
	}
	// As the unit asks: an unprivileged dynamic user, no capabilities, no
	// new privileges, a seccomp filter; the decider too.
	main := mainPid()
	kids := strings.Fields(must("cat", "/proc/"+main+"/task/"+main+"/children"))
	if len(kids) != 1 {
		t.Fatalf("srt-proxy's children: %q", kids)
	}
	for _, p := range []string{main, kids[0]} {
		s := status(p)
		if uid := strings.Fields(s["Uid"]); len(uid) == 0 || uid[0] == "0" || s["CapEff"] != "0000000000000000" || s["NoNewPrivs"] != "1" || s["Seccomp"] != "2" {
			t.Errorf("%s: Uid %s, CapEff %s, NoNewPrivs %s, Seccomp %s", s["Name"], s["Uid"], s["CapEff"], s["NoNewPrivs"], s["Seccomp"])
		}
	}

	// The decider dies: srt-proxy stops; the next connection starts both.
	must("kill", "-KILL", kids[0])
	for deadline := time.Now().Add(10 * time.Second); ; {
		if out, _ := in("systemctl", "is-active", "srt-proxy.service"); strings.TrimSpace(out) == "inactive" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("srt-proxy.service still runs after its decider died:\n%s", journal())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := curl("http://" + up.addr + "/y"); got != "hello\n" {
		t.Fatalf("GET after a restart: %q\n%s", got, journal())
	}
	up.next(t)
	if m := mainPid(); m == main || m == "0" {
		t.Errorf("MainPID %s after the restart (was %s)", m, main)
	}

	must("systemctl", "stop", "srt-proxy.service")
	want := "srt proxy: serving fd 3\nsrt proxy: stopped (decider: decider closed the stream)\nsrt proxy: serving fd 3\nsrt proxy: stopped (SIGTERM)\n"
	if got := journal(); !strings.HasSuffix(got, want) {
		t.Errorf("journal:\n%s\nwant it to end:\n%s", got, want)
	}
	if out, _ := in("systemctl", "is-failed", "srt-proxy.service", "srt-proxy.socket"); out != "inactive\nactive\n" {
		t.Errorf("after the stop: %q", out)
	}
}
