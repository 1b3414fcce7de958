//go:build linux

// Package netns makes the network namespace a sandbox runs in: only a
// loopback interface, where srt's proxies listen and, when the capture
// rules can be installed, where every TCP connection to anywhere but the
// sandbox's own loopback is led to srt-proxy, and DNS is answered by it.
//
// srt starts a helper process (Flag) in a new network namespace (and, for
// a user other than root, a new user namespace that owns it, holding only
// the capabilities it needs as ambient ones). The helper configures the
// namespace, makes the listening sockets in it and sends them to srt
// together with descriptors of its namespaces (SCM_RIGHTS on a
// SOCK_SEQPACKET pair, descriptor 3), installs the NAT and filter rules
// (nftables, over netlink, in one batch), reports how that went and
// exits. srt then runs bubblewrap inside the namespace through nsenter
// (bubblewrap makes its own user namespace inside, whose processes have no
// capability over this one). A socket stays bound to the namespace it was
// made in: srt-proxy, outside, accepts what the sandbox connects to.
//
//	helper                                          srt
//	  ├─ lo up, addresses, default routes via lo
//	  ├─ listening sockets
//	  ├─ 'L' nProxy nCapture nDNS + SCM_RIGHTS ────▶ │ plans, starts nsenter → bubblewrap
//	  │    (sockets…, net namespace, user namespace)
//	  ├─ nftables rules, both families (one netlink batch)
//	  └─ 'N' + "" or why the rules failed ─────────▶ │ tells the init stage to start the command
package netns

import (
	"fmt"
	"net/netip"
	"strings"
)

// Flag is argv[1] of the helper, with the version of this argv format.
const Flag = "--srt-netns=v2"

// Addresses inside every sandbox.
var (
	// SourceV4 and SourceV6 are the loopback interface's extra addresses,
	// the source of every connection the default routes carry (without a
	// source address of its own a redirected connection never completes).
	SourceV4 = netip.MustParseAddr("198.18.0.1")
	SourceV6 = netip.MustParseAddr("fd00:5253::1")
	// DNS is where the sandbox's resolver listens (UDP and TCP); the
	// sandbox's resolv.conf names it.
	DNS = netip.MustParseAddrPort("127.0.0.53:53")
)

// CapturePort is the port of the capture listeners (bound to the wildcard
// addresses, 0.0.0.0 and ::, since a redirected connection arrives at lo's
// primary address) that the NAT rules lead every captured connection to.
const CapturePort = 3129

// ResolvConf is the sandbox's /etc/resolv.conf when DNS is answered.
const ResolvConf = "# srt: names are answered by srt-proxy; no query leaves the sandbox\nnameserver 127.0.0.53\noptions edns0\n"

// Spec is what the helper makes.
type Spec struct {
	// Proxy are the proxies' listening addresses ("127.0.0.1:3128"); an
	// IPv6 one the namespace cannot have is skipped.
	Proxy []netip.AddrPort
	// Capture makes the capture and DNS sockets, the routes and the rules.
	Capture bool
	// Loopback are loopback destinations ("127.0.0.1:8765", "[::1]:8765")
	// led to srt-proxy, and through it to the host's own loopback, instead
	// of staying inside.
	Loopback []netip.AddrPort
}

// Args renders the spec as the helper's argv (after the program name).
func (s Spec) Args() []string {
	a := []string{Flag}
	for _, p := range s.Proxy {
		a = append(a, "--proxy="+p.String())
	}
	if s.Capture {
		a = append(a, "--capture")
		for _, l := range s.Loopback {
			a = append(a, "--loopback="+l.String())
		}
	}
	return a
}

// parseArgs is the inverse of Args.
func parseArgs(args []string) (Spec, error) {
	var s Spec
	if len(args) == 0 || args[0] != Flag {
		return s, fmt.Errorf("this helper speaks %s, srt asked for %q: install srt and srt-init from the same build", Flag, strings.Join(args[:min(len(args), 1)], ""))
	}
	for _, a := range args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "--proxy", "--loopback":
			ap, err := netip.ParseAddrPort(v)
			if err != nil {
				return s, fmt.Errorf("%s: %w", k, err)
			}
			if k == "--proxy" {
				s.Proxy = append(s.Proxy, ap)
			} else {
				s.Loopback = append(s.Loopback, ap)
			}
		case "--capture":
			s.Capture = true
		default:
			return s, fmt.Errorf("unknown argument %q", a)
		}
	}
	return s, nil
}

// Messages from the helper.
const (
	msgListeners = 'L'
	msgRules     = 'N'
)
