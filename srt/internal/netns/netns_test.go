//go:build linux

package netns

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// hookEnv names the test hooks the helper run by these tests reaches
// (comma-separated), through the environment srt never gives it:
//
//	no-nat  the NAT chains get a type no kernel has, as in a kernel
//	        without nftables NAT
//	list    once done, the helper lists the nftables rules it sees on
//	        stderr (listRules)
const hookEnv = "SRT_NETNS_TEST_HOOKS"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Flag {
		hooks := strings.Split(os.Getenv(hookEnv), ",")
		if slices.Contains(hooks, "no-nat") {
			natType = "srt-test-no-such-type"
		}
		status := HelperMain(os.Args[1:])
		if slices.Contains(hooks, "list") {
			if err := listRules(os.Stderr); err != nil {
				fmt.Fprintf(os.Stderr, "listing the rules: %v\n", err)
				status = 1
			}
		}
		os.Exit(status)
	}
	os.Exit(m.Run())
}

// withHooks has the helpers the test starts run with hooks (hookEnv).
func withHooks(t *testing.T, hooks string) {
	helperEnv = []string{hookEnv + "=" + hooks}
	t.Cleanup(func() { helperEnv = nil })
}

func nsenterPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nsenter", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("NOT TESTED: %s is not installed (scripts/test installs it)", p)
		}
	}
	path, _ := exec.LookPath("nsenter")
	return path
}

// listRules writes the nftables tables, chains and rules of the current
// network namespace, read back over netlink, one line each.
func listRules(w io.Writer) error {
	c, err := nftables.New()
	if err != nil {
		return err
	}
	tables, err := c.ListTables()
	if err != nil {
		return err
	}
	chains, err := c.ListChains()
	if err != nil {
		return err
	}
	for _, t := range tables {
		fmt.Fprintf(w, "table %s %s\n", familyName[t.Family], t.Name)
		sets, err := c.GetSets(t)
		if err != nil {
			return err
		}
		for _, set := range sets {
			elems, err := c.GetSetElements(set)
			if err != nil {
				return err
			}
			var keys []string
			for _, e := range elems {
				keys = append(keys, fmt.Sprintf("%x", e.Key))
			}
			slices.Sort(keys)
			fmt.Fprintf(w, " set %s type %s anonymous %v constant %v: %s\n", set.Name, set.KeyType.Name, set.Anonymous, set.Constant, strings.Join(keys, " "))
		}
		for _, ch := range chains {
			if ch.Table.Name != t.Name || ch.Table.Family != t.Family {
				continue
			}
			fmt.Fprintf(w, " chain %s type %s hook %d priority %d policy %d\n", ch.Name, ch.Type, *ch.Hooknum, *ch.Priority, *ch.Policy)
			rules, err := c.GetRules(t, ch)
			if err != nil {
				return err
			}
			for _, r := range rules {
				var e []string
				for _, x := range r.Exprs {
					e = append(e, renderExpr(x))
				}
				fmt.Fprintf(w, "  %s\n", strings.Join(e, "; "))
			}
		}
	}
	return nil
}

var familyName = map[nftables.TableFamily]string{nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6", nftables.TableFamilyINet: "inet"}

// renderExpr renders the expressions srt's rules use, every field the
// kernel reports; any other as Go sees it.
func renderExpr(x expr.Any) string {
	switch e := x.(type) {
	case *expr.Meta:
		return fmt.Sprintf("meta key %d > r%d", e.Key, e.Register)
	case *expr.Cmp:
		return fmt.Sprintf("cmp r%d op %d %x", e.Register, e.Op, e.Data)
	case *expr.Payload:
		return fmt.Sprintf("payload base %d offset %d len %d > r%d", e.Base, e.Offset, e.Len, e.DestRegister)
	case *expr.Bitwise:
		return fmt.Sprintf("bitwise r%d & %x ^ %x > r%d", e.SourceRegister, e.Mask, e.Xor, e.DestRegister)
	case *expr.Immediate:
		return fmt.Sprintf("immediate %x > r%d", e.Data, e.Register)
	case *expr.Redir:
		return fmt.Sprintf("redir port r%d-r%d flags %#x", e.RegisterProtoMin, e.RegisterProtoMax, e.Flags)
	case *expr.NAT:
		return fmt.Sprintf("nat type %d family %d addr r%d-r%d port r%d-r%d flags %+v", e.Type, e.Family, e.RegAddrMin, e.RegAddrMax, e.RegProtoMin, e.RegProtoMax,
			[]bool{e.Random, e.FullyRandom, e.Persistent, e.Prefix, e.Specified})
	case *expr.Lookup:
		return fmt.Sprintf("lookup r%d in %s invert %v", e.SourceRegister, e.SetName, e.Invert)
	case *expr.Verdict:
		return fmt.Sprintf("verdict %s", map[expr.VerdictKind]string{expr.VerdictAccept: "accept", expr.VerdictDrop: "drop"}[e.Kind])
	case *expr.Reject:
		return fmt.Sprintf("reject type %d code %d", e.Type, e.Code)
	}
	return fmt.Sprintf("%T %+v", x, x)
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
	nsenter := nsenterPath(t)
	spec := Spec{
		Proxy:    []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128")},
		Capture:  true,
		Loopback: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8765"), netip.MustParseAddrPort("127.0.0.1:8767")},
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
	for _, dst := range []string{"198.18.200.1:4444", "127.0.0.1:8765", "127.0.0.1:8767"} {
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
// waiting for a timeout, and nothing is captured. The kernel refuses the
// batch as a kernel without nftables NAT does (a NAT chain of a type it
// does not have), and takes none of it.
func TestRulesFailed(t *testing.T) {
	nsenter := nsenterPath(t)
	withHooks(t, "no-nat,list")
	exe, _ := os.Executable()
	n, err := Start(exe, Spec{Proxy: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128")}, Capture: true,
		Loopback: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8765")}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	why := <-n.Rules()
	if want := "the kernel lacks nftables NAT support (nf_tables with nat chains, redirect, dnat and reject: modules nft_chain_nat, nft_nat, nft_redir, nft_reject; `unshare -rn nft 'add table ip t; add chain ip t c { type nat hook output priority -100; }'` shows whether it has them): netlink receive: no such file or directory"; why != want {
		t.Fatalf("rules: %q, want %q", why, want)
	}
	if got := n.stderr.String(); got != "" {
		t.Errorf("rules installed by a refused batch:\n%s", got)
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
	if _, err := parseArgs([]string{"--srt-netns=v1", "--capture", "--iptables=/a"}); err == nil || !strings.Contains(err.Error(), "same build") {
		t.Fatalf("err %v", err)
	}
	s := Spec{Proxy: []netip.AddrPort{netip.MustParseAddrPort("[::1]:1080")}, Capture: true, Loopback: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.2:9")}}
	got, err := parseArgs(s.Args())
	if err != nil || fmt.Sprint(got) != fmt.Sprint(s) {
		t.Fatalf("round trip: %v %v", got, err)
	}
}

// The rules installed, as the kernel reports them back: the ports of a
// loopback address with more than one in a set (8765 and 9000: 223d
// 2328; a duplicate entry once), IPv6 loopback entries in the ip6 table.
// Registers: r1, r2; payload base 1 the network header, 2 the transport header; meta key
// 16 l4proto; cmp op 0 ==, 1 !=; nat type 1 dnat, family 2 IPv4; reject
// type 0 ICMP unreachable, code 3 (IPv4) and 4 (IPv6) port unreachable.
// The kernel fills in what the rules leave out: each range's maximum (its
// minimum) and the flag "port given" (redir flags 0x2, nat Specified).
func TestRuleset(t *testing.T) {
	withHooks(t, "list")
	exe, _ := os.Executable()
	n, err := Start(exe, Spec{Capture: true, Loopback: []netip.AddrPort{
		netip.MustParseAddrPort("127.0.0.1:8765"), netip.MustParseAddrPort("127.0.0.1:9000"),
		netip.MustParseAddrPort("[::1]:8765"), netip.MustParseAddrPort("127.0.0.2:443"), netip.MustParseAddrPort("127.0.0.1:9000"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	if why := <-n.Rules(); why != "" {
		t.Fatalf("rules: %s", why)
	}
	want := `table ip srt
 set __set0 type inet_service anonymous true constant true: 223d 2328
 chain nat-output type nat hook 3 priority -100 policy 1
  meta key 16 > r1; cmp r1 op 0 06; payload base 1 offset 16 len 4 > r1; cmp r1 op 0 7f000001; payload base 2 offset 2 len 2 > r1; lookup r1 in __set0 invert false; immediate 0c39 > r1; redir port r1-r1 flags 0x2
  meta key 16 > r1; cmp r1 op 0 06; payload base 1 offset 16 len 4 > r1; cmp r1 op 0 7f000002; payload base 2 offset 2 len 2 > r1; cmp r1 op 0 01bb; immediate 0c39 > r1; redir port r1-r1 flags 0x2
  meta key 16 > r1; cmp r1 op 0 11; payload base 2 offset 2 len 2 > r1; cmp r1 op 0 0035; immediate 7f000035 > r1; immediate 0035 > r2; nat type 1 family 2 addr r1-r1 port r2-r2 flags [false false false false true]
  meta key 16 > r1; cmp r1 op 0 06; payload base 1 offset 16 len 4 > r1; bitwise r1 & ff000000 ^ 00000000 > r1; cmp r1 op 1 7f000000; immediate 0c39 > r1; redir port r1-r1 flags 0x2
 chain filter-output type filter hook 3 priority 0 policy 1
  meta key 16 > r1; cmp r1 op 0 11; payload base 1 offset 12 len 4 > r1; cmp r1 op 0 7f000035; payload base 2 offset 0 len 2 > r1; cmp r1 op 0 0035; verdict accept
  meta key 16 > r1; cmp r1 op 0 11; payload base 1 offset 16 len 4 > r1; bitwise r1 & ff000000 ^ 00000000 > r1; cmp r1 op 1 7f000000; reject type 0 code 3
table ip6 srt
 chain nat-output type nat hook 3 priority -100 policy 1
  meta key 16 > r1; cmp r1 op 0 06; payload base 1 offset 24 len 16 > r1; cmp r1 op 0 00000000000000000000000000000001; payload base 2 offset 2 len 2 > r1; cmp r1 op 0 223d; immediate 0c39 > r1; redir port r1-r1 flags 0x2
  meta key 16 > r1; cmp r1 op 0 06; payload base 1 offset 24 len 16 > r1; cmp r1 op 1 00000000000000000000000000000001; immediate 0c39 > r1; redir port r1-r1 flags 0x2
 chain filter-output type filter hook 3 priority 0 policy 1
  meta key 16 > r1; cmp r1 op 0 11; payload base 1 offset 24 len 16 > r1; cmp r1 op 1 00000000000000000000000000000001; reject type 0 code 4
`
	if got := n.stderr.String(); got != want {
		t.Errorf("installed:\n%s\nwant:\n%s", got, want)
	}
}

// Thousands of loopback ports fit in the one batch (a set of ports per
// address); more than one netlink message holds are refused, saying so.
func TestManyLoopbackEntries(t *testing.T) {
	many := func(n int) []netip.AddrPort {
		var out []netip.AddrPort
		for p := 1; p <= n; p++ {
			out = append(out, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p)), netip.AddrPortFrom(netip.IPv6Loopback(), uint16(p)))
		}
		return out
	}
	exe, _ := os.Executable()
	for _, tc := range []struct {
		ports int
		want  string
	}{
		{5000, ""},
		{20000, "40000 loopback destinations (allowedDomains entries naming a loopback host and a port; localhost is two) need more rules than one netlink message holds (some 12000 fit): allow fewer: SendMessages: netlink send-messages: sendmsg: message too long"},
	} {
		n, err := Start(exe, Spec{Capture: true, Loopback: many(tc.ports)})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Wait(); err != nil {
			t.Fatal(err)
		}
		if why := <-n.Rules(); why != tc.want {
			if why == "" {
				t.Logf("NOT TESTED: %d ports fit in this kernel's netlink message (net.core.wmem_default)", tc.ports)
			} else {
				t.Errorf("%d ports: %q, want %q", tc.ports, why, tc.want)
			}
		}
		n.Close()
	}
}

// Closing a namespace while its rules are still awaited (a command released
// before the helper reported) ends the wait with a report, and never closes
// the channel under the read: its descriptor number, reused by the next
// open, must not be read by the rules' reader (the race detector sees the
// descriptor read and closed at once).
func TestCloseWhileRulesAwaited(t *testing.T) {
	exe, _ := os.Executable()
	for i := range 20 {
		n, err := Start(exe, Spec{Proxy: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3128")}, Capture: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Wait(); err != nil {
			n.Close()
			t.Fatal(err)
		}
		n.Close()
		select {
		case <-n.Rules():
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: no rules report 10 s after Close", i)
		}
	}
}
