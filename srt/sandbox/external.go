//go:build linux

package sandbox

import (
	"fmt"
	"os"

	"github.com/srt-sandbox/srt/internal/egress"
	"github.com/srt-sandbox/srt/settings"
)

// externalPorts are network.httpProxyPort and socksProxyPort ("bring your
// own proxy"), read when the Manager is made and kept for its life: a
// sandbox port whose setting is not 0 is relayed, byte for byte, by
// srt-proxy to the external proxy on this host's localhost:<port> instead
// of being served by srt's own proxy. srt decides nothing on that side:
// no lists, no per-command lists, no ask callback, no credentials.
type externalPorts struct {
	http, socks int
}

func externalOf(n *settings.Network) externalPorts {
	return externalPorts{http: n.HTTPProxyPort, socks: n.SOCKSProxyPort}
}

// ownProxy says whether srt's own proxy (and the decider) serves any port.
func (e externalPorts) ownProxy() bool { return e.http == 0 || e.socks == 0 }

// handOver gives the egress a sandbox's listening sockets: those of a
// relayed port as relays, the others to srt's own proxy.
func (e externalPorts) handOver(eg *egress.Egress, id string, files []*os.File, ports proxyPorts) error {
	var own, http, socks []*os.File
	for _, f := range files {
		switch port := localPort(f); {
		case port == ports.http && e.http != 0:
			http = append(http, f)
		case port == ports.socks && e.socks != 0:
			socks = append(socks, f)
		default:
			own = append(own, f)
		}
	}
	if len(http) > 0 {
		if err := eg.AddRelay(id, e.http, "httpProxyPort", http); err != nil {
			return err
		}
	}
	if len(socks) > 0 {
		if err := eg.AddRelay(id, e.socks, "socksProxyPort", socks); err != nil {
			return err
		}
	}
	if len(own) > 0 {
		return eg.AddListeners(id, own)
	}
	return nil
}

// warnExternalPorts says, on a live update, that a change of the external
// proxy ports does not take effect: the sandboxes' environment and the
// egress processes were set up for the ports the Manager was made with.
func (m *Manager) warnExternalPorts(cfg *settings.Config) {
	for _, k := range settings.StartOnlyChanges(m.net.made, &cfg.Network, settings.ReadBySRT) {
		fmt.Fprintf(m.opts.Warnings, "srt: warning: the update changes %s, which srt reads only when it starts; it keeps the value it started with (start a new srt, or a new Manager, to change it)\n", k)
	}
}

// noteExternalLists says, in a debug line, what a per-command list cannot
// do when an external proxy serves the sandbox's HTTP proxy port (§9.4:
// "no effect with httpProxyPort").
func (m *Manager) noteExternalLists() {
	switch e := m.net.ext; {
	case e.http != 0 && e.socks != 0:
		m.opts.Logger.Debug("RegisterCommandNetwork: network.httpProxyPort and socksProxyPort are set, so external proxies decide every connection: a per-command list has no effect")
	case e.http != 0:
		m.opts.Logger.Debug("RegisterCommandNetwork: network.httpProxyPort is set, so the external proxy decides the HTTP proxy's connections: a per-command list applies only to srt's own SOCKS proxy")
	case e.socks != 0:
		m.opts.Logger.Debug("RegisterCommandNetwork: network.socksProxyPort is set, so the external proxy decides the SOCKS connections: a per-command list applies only to srt's own HTTP proxy")
	}
}
