package netns

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Flag {
		os.Exit(HelperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func tools(t *testing.T) (string, string, string) {
	t.Helper()
	var out []string
	for _, p := range []string{"iptables-restore", "ip6tables-restore", "nsenter"} {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Skipf("NOT TESTED: %s is not installed (scripts/test installs it)", p)
		}
		out = append(out, path)
	}
	return out[0], out[1], out[2]
}

// inside runs a python3 snippet inside the namespace.
func inside(t *testing.T, n *Namespace, nsenter, code string) string {
	t.Helper()
	args := []string{"-F", "--net=/proc/self/fd/3"}
	files := []*os.File{n.Net}
	if n.User != nil {
		args = append(args, "--user=/proc/self/fd/4", "--preserve-credentials")
		files = append(files, n.User)
	}
	cmd := exec.Command(nsenter, append(args, "--", "python3", "-c", code)...)
	cmd.ExtraFiles = files
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("inside: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// originalDst reads SO_ORIGINAL_DST of an accepted IPv4 connection.
func originalDst(t *testing.T, c net.Conn) netip.AddrPort {
	t.Helper()
	raw, _ := c.(*net.TCPConn).SyscallConn()
	var ap netip.AddrPort
	raw.Control(func(fd uintptr) {
		var sa [16]byte
		l := uint32(len(sa))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_IP, 80, uintptr(unsafePtr(&sa[0])), uintptr(unsafePtr(&l)), 0)
		if e != 0 {
			t.Errorf("SO_ORIGINAL_DST: %v", e)
			return
		}
		ap = netip.AddrPortFrom(netip.AddrFrom4([4]byte(sa[4:8])), binary.BigEndian.Uint16(sa[2:4]))
	})
	return ap
}

func TestCaptureNamespace(t *testing.T) {
	ipt, ip6t, nsenter := tools(t)
	spec := Spec{
		Proxy:   []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128")},
		Capture: true, IPTables: ipt, IP6Tables: ip6t,
		Loopback: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8765")},
	}
	exe, _ := os.Executable()
	n, err := Start(exe, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(n.Proxy) != 1 || len(n.Capture) != 2 || len(n.DNS) != 2 {
		t.Fatalf("sockets: proxy %d capture %d dns %d", len(n.Proxy), len(n.Capture), len(n.DNS))
	}
	if (n.User == nil) != (os.Getuid() == 0) {
		t.Fatalf("user namespace descriptor: %v as uid %d", n.User, os.Getuid())
	}
	select {
	case why := <-n.Rules():
		if why != "" {
			t.Fatalf("rules: %s", why)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no report of the rules")
	}
	capture, err := net.FileListener(n.Capture[0])
	if err != nil {
		t.Fatal(err)
	}
	defer capture.Close()
	got := make(chan netip.AddrPort, 4)
	go func() {
		for {
			c, err := capture.Accept()
			if err != nil {
				return
			}
			got <- originalDst(t, c)
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	for _, dst := range []string{"198.18.200.1:4444", "127.0.0.1:8765"} {
		host, p, _ := net.SplitHostPort(dst)
		out := inside(t, n, nsenter, fmt.Sprintf("import socket; s=socket.create_connection((%q,%s),5); print(s.recv(10).decode())", host, p))
		if out != "hi" {
			t.Errorf("%s: got %q", dst, out)
		}
		if o := <-got; o.String() != dst {
			t.Errorf("original destination %s, want %s", o, dst)
		}
	}
	// Another loopback port stays the sandbox's own: nothing listens there.
	out := inside(t, n, nsenter, `
import socket
try:
    socket.create_connection(("127.0.0.1", 8766), 5); print("connected")
except OSError as e: print(e.errno)`)
	if out != fmt.Sprint(int(unix.ECONNREFUSED)) {
		t.Errorf("other loopback port: %s", out)
	}
	// UDP out is refused at the send (REJECT in OUTPUT: EPERM); UDP to
	// port 53 anywhere reaches the DNS socket.
	out = inside(t, n, nsenter, `
import socket
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("198.18.200.1", 9)); print("sent")
except OSError as e: print(e.errno)
d=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.sendto(b"query", ("198.18.200.1", 53)); print("sent")`)
	if out != fmt.Sprintf("%d\nsent", int(unix.EPERM)) {
		t.Errorf("UDP: %q", out)
	}
	dns, err := net.FilePacketConn(n.DNS[0])
	if err != nil {
		t.Fatal(err)
	}
	defer dns.Close()
	dns.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	m, from, err := dns.ReadFrom(buf)
	if err != nil || string(buf[:m]) != "query" {
		t.Errorf("DNS socket: %q %v", buf[:m], err)
	}
	// And its answer goes back, from the address the query was sent to.
	go func() {
		if from == nil {
			return
		}
		// The program below sends its query again until it is answered.
		for i := 0; i < 50; i++ {
			dns.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, from, err := dns.ReadFrom(buf)
			if err != nil {
				return
			}
			dns.WriteTo(append([]byte("answer to "), buf[:n]...), from)
		}
	}()
	out = inside(t, n, nsenter, `
import socket
d=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.settimeout(1)
for i in range(5):
    d.sendto(b"again", ("198.18.200.1", 53))
    try:
        data, addr = d.recvfrom(64); print(data.decode(), addr[0]); break
    except socket.timeout: pass
else: print("no answer")`)
	if out != "answer to again 198.18.200.1" {
		t.Errorf("DNS answer: %q", out)
	}
}

// When the rules cannot be installed the helper says why and takes the
// default routes away: a connection out then fails at once instead of
// waiting for a timeout, and nothing is captured.
func TestRulesFailed(t *testing.T) {
	_, _, nsenter := tools(t)
	exe, _ := os.Executable()
	n, err := Start(exe, Spec{Proxy: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128")}, Capture: true, IPTables: "/bin/false", IP6Tables: "/bin/false"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	why := <-n.Rules()
	if !strings.Contains(why, "false: exit status 1") {
		t.Fatalf("rules: %q", why)
	}
	out := inside(t, n, nsenter, `
import socket
try:
    socket.create_connection(("198.18.200.1", 80), 5); print("connected")
except OSError as e: print(e.errno)`)
	if out != fmt.Sprint(int(unix.ENETUNREACH)) {
		t.Errorf("connection out without rules: %s", out)
	}
}

// A helper that is not srt's (another argv version) refuses to run.
func TestHelperVersion(t *testing.T) {
	if _, err := parseArgs([]string{"--srt-netns=v0"}); err == nil || !strings.Contains(err.Error(), "same build") {
		t.Fatalf("err %v", err)
	}
	s := Spec{Proxy: []netip.AddrPort{netip.MustParseAddrPort("[::1]:1080")}, Capture: true, IPTables: "/a", IP6Tables: "/b", Loopback: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.2:9")}}
	got, err := parseArgs(s.Args())
	if err != nil || fmt.Sprint(got) != fmt.Sprint(s) {
		t.Fatalf("round trip: %v %v", got, err)
	}
}

func TestRuleset(t *testing.T) {
	lo := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8765"), netip.MustParseAddrPort("127.0.0.1:9000"), netip.MustParseAddrPort("[::1]:8765")}
	want4 := "*nat\n-A OUTPUT -d 127.0.0.1 -p tcp -m multiport --dports 8765,9000 -j REDIRECT --to-ports 3129\n" +
		"-A OUTPUT -p udp --dport 53 -j DNAT --to-destination 127.0.0.53:53\n" +
		"-A OUTPUT -p tcp ! -d 127.0.0.0/8 -j REDIRECT --to-ports 3129\nCOMMIT\n" +
		"*filter\n-A OUTPUT -p udp -s 127.0.0.53 --sport 53 -j ACCEPT\n-A OUTPUT -p udp ! -d 127.0.0.0/8 -j REJECT\nCOMMIT\n"
	if got := ruleset(false, lo); got != want4 {
		t.Errorf("IPv4:\n%s", got)
	}
	want6 := "*nat\n-A OUTPUT -d ::1 -p tcp -m multiport --dports 8765 -j REDIRECT --to-ports 3129\n" +
		"-A OUTPUT -p tcp ! -d ::1/128 -j REDIRECT --to-ports 3129\nCOMMIT\n" +
		"*filter\n-A OUTPUT -p udp ! -d ::1/128 -j REJECT\nCOMMIT\n"
	if got := ruleset(true, lo); got != want6 {
		t.Errorf("IPv6:\n%s", got)
	}
	var many []netip.AddrPort
	for p := uint16(1); p <= 16; p++ {
		many = append(many, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), p))
	}
	if got := strings.Count(ruleset(false, many), "--dports"); got != 2 {
		t.Errorf("16 ports in %d rules, want 2", got)
	}
}
