// Package capture serves the capture listeners of a sandbox's network
// namespace (handoff role "capture"). There, NAT rules redirect every TCP
// connection the sandbox makes to an address outside the namespace, and to
// the loopback ports of allowedDomains entries, to these listeners
// (docs/architecture.md, "Captured connections and the sandbox's name
// server"). For each connection accepted this package reads where it was
// going (SO_ORIGINAL_DST), turns that into the destination to decide about,
// and hands it to the proxy, which decides it as a CONNECT to that host and
// port (proxy.Server.ServeCaptured).
//
//	program ── connect 198.18.128.7:443 ─▶ NAT REDIRECT ─▶ capture listener
//	   accept ─▶ SO_ORIGINAL_DST 198.18.128.7:443
//	          ─▶ fake address: fakeip.Table.Name ─▶ "example.com"
//	          ─▶ proxy.ServeCaptured{User, "example.com", 443} ─▶ Asker ─▶ dial + splice, or RST
//
// The destination, by the original address:
//
//   - a fake address (fakeip ranges): the name it stands for; one that
//     stands for no name (never handed out, or evicted) is refused
//     (whyUnknownFake), and nobody is asked;
//   - a loopback address and port the sandbox's loopback map lists: the
//     host its allowedDomains entry named ("localhost");
//   - anything else: the IP address itself.
//
// A connection whose original destination is the listener's own address
// was not redirected (a program connected to the capture port itself):
// it is refused (whyNotRedirected).
package capture

import (
	"net"
	"net/netip"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/accept"
	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/captured"
)

// Refusal reasons of captured connections no one is asked about.
const (
	whyUnknownFake   = "the address stands for no name (not from this sandbox's DNS, or looked up too long ago): look the name up again"
	whyNotRedirected = "a connection to the capture port itself"
	whyNoOriginal    = "the original destination cannot be read"
)

// Sandbox is one sandbox's capture: who its connections are attributed
// to and how its destinations map.
type Sandbox struct {
	Server *proxy.Server // decides and serves; required
	Table  *fakeip.Table // the fake addresses of the name server; required
	// User is the sandbox's attribution user ("srt.<label>").
	User string
	// Loopback maps an original loopback destination ("127.0.0.1:8765",
	// "[::1]:8765") to the host to ask about ("localhost").
	Loopback map[string]string
}

// Serve accepts connections on ln and serves each until ln is closed.
func (s *Sandbox) Serve(ln net.Listener) error { return accept.Loop(ln, s.serve) }

func (s *Sandbox) serve(c net.Conn) {
	d := captured.Destination{User: s.User, Refuse: whyNoOriginal}
	if tc, ok := c.(*net.TCPConn); ok {
		if orig, err := OriginalDst(tc); err == nil {
			d = s.Destination(orig, localAddr(tc))
		}
	}
	s.Server.ServeCaptured(c, d)
}

func localAddr(c net.Conn) netip.AddrPort {
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// Destination is what a connection to orig, accepted on local, is decided
// as.
func (s *Sandbox) Destination(orig, local netip.AddrPort) captured.Destination {
	addr := orig.Addr().Unmap()
	d := captured.Destination{User: s.User, Host: addr.String(), Port: int(orig.Port()), Literal: true}
	switch {
	case addr == local.Addr().Unmap() && orig.Port() == local.Port():
		d.Refuse = whyNotRedirected
	case fakeip.IsFake(addr):
		name, ok := s.Table.Name(addr)
		if !ok {
			d.Refuse = whyUnknownFake
			break
		}
		d.Host, d.Literal = name, false
	case addr.IsLoopback():
		name := s.Loopback[netip.AddrPortFrom(addr, orig.Port()).String()]
		if name == "" {
			break
		}
		if h, err := hostname.Canonical(name); err == nil {
			d.Host, d.Literal = h, isAddr(h)
		}
	}
	return d
}

// isAddr reports whether a canonical host is an IP address.
func isAddr(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
