//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The capture tests need what srt builds for a sandbox: a network
// namespace whose NAT rules redirect every outbound TCP connection to a
// capture listener, a name server's sockets in it, and a resolv.conf that
// names it. The test binary builds one itself, as a helper run under
// "unshare --user --map-root-user --net --mount" (which works unprivileged),
// and passes the sockets back over SCM_RIGHTS; the test runs its clients
// in the namespace with nsenter.

// sandboxNSEnv carries the helper's spec (a JSON sandboxNSSpec); set, the
// test binary is the helper (TestMain).
const sandboxNSEnv = "SRT_PROXY_TEST_SANDBOX_NS"

type sandboxNSSpec struct {
	// Loopback are loopback ports redirected to the capture listener too
	// (srt does so for allowedDomains entries naming a loopback port).
	Loopback []int
	// Resolv is bound over /etc/resolv.conf.
	Resolv string
}

// sandboxNSHelper builds the namespace (it runs in it, as its root),
// sends the sockets and the capture port over descriptor 3, and waits for
// its stdin to close. Failures go to descriptor 3 as "error: …".
func sandboxNSHelper(spec string) int {
	ctl := os.NewFile(3, "ctl")
	fail := func(err error) int {
		ctl.Write([]byte("error: " + err.Error() + "\n"))
		return 1
	}
	var s sandboxNSSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fail(err)
	}
	run := func(args ...string) error {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	for _, cmd := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", "198.18.0.1/32", "dev", "lo"},
		// nodad: a tentative address (duplicate address detection still
		// running) cannot be a route's source yet.
		{"ip", "-6", "addr", "add", "fd00:5253::1/128", "dev", "lo", "nodad"},
		{"ip", "route", "add", "default", "dev", "lo", "src", "198.18.0.1"},
		{"ip", "-6", "route", "add", "default", "dev", "lo", "src", "fd00:5253::1"},
	} {
		if err := run(cmd...); err != nil {
			return fail(err)
		}
	}
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	port := strconv.Itoa(l4.Addr().(*net.TCPAddr).Port)
	l6, err := net.Listen("tcp6", "[::1]:"+port)
	if err != nil {
		return fail(err)
	}
	rules := [][]string{
		{"iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "!", "-d", "127.0.0.0/8", "-j", "REDIRECT", "--to-ports", port},
		{"ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "!", "-d", "::1", "-j", "REDIRECT", "--to-ports", port},
	}
	for _, p := range s.Loopback {
		rules = append(rules,
			[]string{"iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "127.0.0.1", "--dport", strconv.Itoa(p), "-j", "REDIRECT", "--to-ports", port},
			[]string{"ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", "::1", "--dport", strconv.Itoa(p), "-j", "REDIRECT", "--to-ports", port})
	}
	for _, r := range rules {
		if err := run(r...); err != nil {
			return fail(err)
		}
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 53), Port: 53})
	if err != nil {
		return fail(err)
	}
	tcp, err := net.Listen("tcp4", "127.0.0.53:53")
	if err != nil {
		return fail(err)
	}
	if err := unix.Mount(s.Resolv, "/etc/resolv.conf", "", unix.MS_BIND, ""); err != nil {
		return fail(fmt.Errorf("binding %s over /etc/resolv.conf: %w", s.Resolv, err))
	}
	var fds []int
	for _, x := range []interface{ File() (*os.File, error) }{l4.(*net.TCPListener), l6.(*net.TCPListener), udp, tcp.(*net.TCPListener)} {
		f, err := x.File()
		if err != nil {
			return fail(err)
		}
		fds = append(fds, int(f.Fd()))
	}
	if err := unix.Sendmsg(3, []byte("port "+port+"\n"), unix.UnixRights(fds...), nil, 0); err != nil {
		return fail(err)
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// sandboxNS is a namespace the helper built.
type sandboxNS struct {
	pid     int
	port    int        // the capture listener's
	capture []*os.File // the capture listeners, IPv4 and IPv6
	dns     []*os.File // the name server's UDP socket and TCP listener
}

// newSandboxNS builds a namespace whose loopback ports loopback are
// redirected to the capture listener too. It skips the test, loudly, only
// when a tool the namespace needs is not installed.
func newSandboxNS(t *testing.T, loopback ...int) *sandboxNS {
	t.Helper()
	for _, tool := range []string{"unshare", "nsenter", "ip", "iptables", "ip6tables"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the capture tests build a network namespace with NAT rules, and %s is not installed (scripts/test installs it)", tool)
		}
	}
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 127.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(sandboxNSSpec{Loopback: loopback, Resolv: resolv})
	mine, theirs := socketPair(t)
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private", os.Args[0])
	cmd.Env = append(os.Environ(), sandboxNSEnv+"="+string(spec))
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(int(mine.Fd()), buf, oob, 0)
	if err != nil || n == 0 {
		t.Fatalf("the namespace helper said nothing (%v)", err)
	}
	msg := strings.TrimSpace(string(buf[:n]))
	if strings.HasPrefix(msg, "error: ") {
		t.Fatalf("building the sandbox's namespace: %s", msg)
	}
	ns := &sandboxNS{pid: cmd.Process.Pid}
	if _, err := fmt.Sscanf(msg, "port %d", &ns.port); err != nil {
		t.Fatalf("the namespace helper said %q", msg)
	}
	cms, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(cms) != 1 {
		t.Fatalf("no descriptors from the namespace helper (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&cms[0])
	if err != nil || len(fds) != 4 {
		t.Fatalf("descriptors %v (%v)", fds, err)
	}
	var files []*os.File
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "ns socket")
		t.Cleanup(func() { f.Close() })
		files = append(files, f)
	}
	ns.capture, ns.dns = files[:2], files[2:]
	return ns
}

// run runs a command in the namespace (its network and mount namespaces,
// as the root of its user namespace) and returns its output and exit code.
func (ns *sandboxNS) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(ns.pid), "-U", "-n", "-m", "--"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}
