package egress

import (
	"os"

	"github.com/srt-sandbox/decider/srtlink"
)

// AddCapture hands srt-proxy the sockets of a sandbox's network namespace
// (srtlink.RoleCapture and RoleDNS): capture are the
// TCP listeners the namespace's NAT rules redirect the sandbox's outbound
// connections to, dns the sandbox's name server (a UDP socket and a TCP
// listener, either may come alone). user is the sandbox's attribution user
// (srtlink.UserFor, as its proxy credentials carry it); loopback maps an
// original loopback destination ("127.0.0.1:8765", "[::1]:8765") to the
// host its allowedDomains entry names ("localhost"), and may be nil. An
// empty capture or dns sends nothing for that role. RemoveListeners closes
// them with the sandbox's others.
func (e *Egress) AddCapture(id, user string, loopback map[string]string, capture, dns []*os.File) error {
	if len(capture) > 0 {
		m := srtlink.Message{T: srtlink.TListen, ID: id, Role: srtlink.RoleCapture, User: user, Loopback: loopback}
		if err := e.sendHandoff(m, capture); err != nil {
			return err
		}
	}
	if len(dns) > 0 {
		return e.sendHandoff(srtlink.Message{T: srtlink.TListen, ID: id, Role: srtlink.RoleDNS}, dns)
	}
	return nil
}
