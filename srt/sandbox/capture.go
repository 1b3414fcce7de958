//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/hostexec"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/internal/netns"
	"github.com/srt-sandbox/srt/internal/plan"
)

// proxyListen are the proxies' addresses inside every sandbox.
var proxyListen = []netip.AddrPort{
	netip.MustParseAddrPort("127.0.0.1:3128"), netip.MustParseAddrPort("[::1]:3128"),
	netip.MustParseAddrPort("127.0.0.1:1080"), netip.MustParseAddrPort("[::1]:1080"),
}

// netTools is the host program of the sandbox's network namespace,
// resolved and checked once (hostexec): nsenter, which runs bubblewrap in
// the namespace. The capture rules need no program: the namespace's
// helper installs them over netlink.
type netTools struct {
	once    sync.Once
	nsenter string
	err     error
}

// fixNsenter is the fix a refused nsenter suggests.
const fixNsenter = "install util-linux's nsenter where only root can change it (/usr/bin/nsenter)"

// tools resolves the network program on first use.
func (m *Manager) tools() *netTools {
	t := &m.netTools
	t.once.Do(func() {
		p, err := lookSbin("nsenter")
		if err == nil {
			_, err = hostexec.Resolve("nsenter", p, fixNsenter, os.Getuid())
		}
		if _, missing := err.(*exec.Error); missing {
			err = hostexec.Missingf("the sandbox's network needs nsenter (util-linux), which is not installed; install it (apt-get install util-linux)")
		}
		if err != nil {
			t.err = err
			return
		}
		t.nsenter = p
	})
	return t
}

// lookSbin finds a program on PATH or, as root's PATH has them, in the
// sbin directories a user's PATH often lacks.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// startNetwork starts making the command's network namespace (netns):
// the proxies' listeners, and, where the kernel can, the capture of every
// other TCP connection and the DNS resolver. loopback are the loopback
// entries of the allow lists in force for the command (loopbackEntries),
// which lead to the host.
func (m *Manager) startNetwork(loopback []netip.AddrPort) (*netns.Namespace, *plan.Network, error) {
	t := m.tools()
	if t.err != nil {
		return nil, nil, t.err
	}
	spec := netns.Spec{Proxy: proxyListen}
	// Without a decider of srt's own (every port relayed to an external
	// proxy) there is nothing to decide a captured connection with.
	if m.net.ext.ownProxy() {
		spec.Capture = true
		spec.Loopback = loopback
	}
	n, err := netns.Start(m.initExe, spec)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) {
			if env := bwrap.CheckEnvironment(); env != nil {
				return nil, nil, env
			}
			return nil, nil, fmt.Errorf("the sandbox could not be built: this machine or process does not allow creating the sandbox's user and network namespaces (%v; a container without them, a seccomp profile that blocks them, or srt already inside a sandbox): %w", err, ErrCannotSandbox)
		}
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	network := &plan.Network{Capture: spec.Capture}
	if spec.Capture {
		network.ResolvConf = netns.ResolvConf
	}
	return n, network, nil
}

// loopbackEntries are the destinations inside the sandbox that the
// allowedDomains entries naming a loopback host and a port lead to the
// host's loopback: "127.0.0.1:8765" and "[::1]:8765" themselves,
// "localhost:8765" both. names maps each one a name entry made to that
// name, for the decision.
func loopbackEntries(lists ...[]string) (addrs []netip.AddrPort, names map[string]string) {
	seen := map[netip.AddrPort]bool{}
	add := func(ap netip.AddrPort, name string) {
		if seen[ap] {
			return
		}
		seen[ap] = true
		addrs = append(addrs, ap)
		if name != "" {
			if names == nil {
				names = map[string]string{}
			}
			names[ap.String()] = name
		}
	}
	for _, list := range lists {
		for _, e := range list {
			p, err := policy.ParseAllowPattern(e)
			if err != nil || p.Port() == 0 {
				continue
			}
			port := uint16(p.Port())
			switch {
			case p.IsIP() && p.IP().Unmap().IsLoopback():
				add(netip.AddrPortFrom(p.IP().Unmap(), port), "")
			case !p.IsWildcard() && p.Host() == "localhost":
				add(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), "localhost")
				add(netip.AddrPortFrom(netip.IPv6Loopback(), port), "localhost")
			}
		}
	}
	return addrs, names
}

// nsenterArgs are the arguments that run bubblewrap in the namespace n,
// whose descriptors the child gets at fd (and fd+1 for the user namespace).
func nsenterArgs(n *netns.Namespace, fd int) (args []string, files []*os.File) {
	args = []string{"--no-fork", "--net=/proc/self/fd/" + strconv.Itoa(fd)}
	files = []*os.File{n.Net}
	if n.User != nil {
		// bubblewrap then runs as the caller, without capabilities, in the
		// namespace's user namespace, and makes its own inside.
		args = append(args, "--user=/proc/self/fd/"+strconv.Itoa(fd+1), "--preserve-credentials")
		files = append(files, n.User)
	}
	return append(args, "--"), files
}

// loopbackNote is what capture being off means for the loopback entries
// in force: a client that honours NO_PROXY (which lists loopback)
// connects to the sandbox's own loopback, not the host's service.
func loopbackNote(entries []netip.AddrPort) string {
	if len(entries) == 0 {
		return ""
	}
	// A few name them: thousands would make the warning unreadable.
	const shown = 8
	var names []string
	for _, e := range entries[:min(len(entries), shown)] {
		names = append(names, e.String())
	}
	if len(entries) > shown {
		names = append(names, fmt.Sprintf("and %d more", len(entries)-shown))
	}
	return "; the allowedDomains entries " + strings.Join(names, ", ") + " reach the host's service only through the proxy variables, and NO_PROXY (which lists loopback) sends curl, Python and most clients straight to the sandbox's own loopback: run those clients with NO_PROXY= no_proxy= (empty) inside"
}

// relayNetworkReady tells the init stage to start the command once the
// capture rules are in place, or, when they failed, once srt has said so.
func (c *Cmd) relayNetworkReady() {
	why := <-c.ns.Rules()
	if why != "" {
		// One line, whatever the helper said (it says why, and what the
		// kernel needs).
		why = strings.ReplaceAll(why, "\n", "; ")
		fmt.Fprintf(c.m.opts.Warnings, "srt: warning: programs that ignore the proxy settings get no network in the sandbox: the capture rules could not be installed: %s%s\n", why, loopbackNote(c.loopAddrs))
	}
	c.channel.Write([]byte{initstage.CtlNetworkReady})
}
