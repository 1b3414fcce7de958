package netns

import (
	"bytes"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
)

// rules installs one family's rules in the helper's namespace, in one run
// of iptables-restore (ip6tables-restore):
//
//	nat OUTPUT    -d <loopback entry> -p tcp --dport P   REDIRECT → CapturePort   (each entry)
//	nat OUTPUT    -p udp --dport 53                      DNAT → 127.0.0.53:53      (IPv4)
//	nat OUTPUT    -p tcp ! -d <loopback net>             REDIRECT → CapturePort
//	filter OUTPUT -p udp -s 127.0.0.53 --sport 53        ACCEPT                    (IPv4: the name server's answers)
//	filter OUTPUT -p udp ! -d <loopback net>             REJECT
//
// The sandbox's own loopback stays its own: servers and clients inside
// still talk to each other, except on the loopback entries' ports, which
// lead to the host's. One run per family, not one per rule: each run of
// iptables costs a few milliseconds, and the command waits for the rules.
func rules(path string, v6 bool, loopback []netip.AddrPort) error {
	name := filepath.Base(path)
	cmd := exec.Command(path, "--wait")
	cmd.Stdin = strings.NewReader(ruleset(v6, loopback))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return fmt.Errorf("%s: %v: %s", name, err, s)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ruleset is the input of iptables-restore for one family.
func ruleset(v6 bool, loopback []netip.AddrPort) string {
	loNet := "127.0.0.0/8"
	if v6 {
		loNet = "::1/128"
	}
	capture := fmt.Sprintf("-j REDIRECT --to-ports %d", CapturePort)
	var b strings.Builder
	b.WriteString("*nat\n")
	// One rule per loopback address, with its ports (multiport takes up
	// to 15 a rule).
	byAddr := map[netip.Addr][]string{}
	var order []netip.Addr
	for _, l := range loopback {
		if l.Addr().Is6() != v6 {
			continue
		}
		if _, ok := byAddr[l.Addr()]; !ok {
			order = append(order, l.Addr())
		}
		byAddr[l.Addr()] = append(byAddr[l.Addr()], port(l.Port()))
	}
	for _, a := range order {
		for ports := byAddr[a]; len(ports) > 0; {
			n := min(len(ports), 15)
			fmt.Fprintf(&b, "-A OUTPUT -d %s -p tcp -m multiport --dports %s %s\n", a, strings.Join(ports[:n], ","), capture)
			ports = ports[n:]
		}
	}
	if !v6 {
		fmt.Fprintf(&b, "-A OUTPUT -p udp --dport 53 -j DNAT --to-destination %s\n", DNS)
	}
	fmt.Fprintf(&b, "-A OUTPUT -p tcp ! -d %s %s\nCOMMIT\n*filter\n", loNet, capture)
	if !v6 {
		// The name server's answer to a query the DNAT rule led to it
		// goes back to where the query came from (198.18.0.1), outside
		// the loopback net: let it pass the REJECT below. Only srt-proxy
		// holds that address and port (binding port 53 needs a
		// capability nothing inside has).
		fmt.Fprintf(&b, "-A OUTPUT -p udp -s %s --sport %d -j ACCEPT\n", DNS.Addr(), DNS.Port())
	}
	fmt.Fprintf(&b, "-A OUTPUT -p udp ! -d %s -j REJECT\nCOMMIT\n", loNet)
	return b.String()
}
