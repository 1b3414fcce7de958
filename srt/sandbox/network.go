//go:build linux

package sandbox

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/srt-sandbox/decider/sanitize"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/egress"
	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// The ports of the proxies inside every sandbox.
const (
	httpProxyPort  = 3128
	socksProxyPort = 1080
)

// network is the manager's side of the egress processes, started the
// first time a sandbox's proxy gets a connection.
type network struct {
	token string // "" when no port is srt's own proxy's
	ext   externalPorts
	once  sync.Once
	eg    *egress.Egress
	err   error
	// regMu orders per-command list registrations with the replay of
	// those made before the egress started (held across the decider's
	// confirmation, so not mu, which violation callbacks take).
	regMu sync.Mutex
	// texts maps attribution labels to command texts (FIFO of 1024).
	mu    sync.Mutex
	texts map[string]string
	order []string
	lists map[string][]string // per-command allow lists, by command id
	// maskRuns counts the runs whose masks the decider has, by key.
	maskRuns map[string]int
	helper   string // the ssh ProxyCommand executable (host path)
	// trust is the running egress's TLS termination; nil without it.
	trust atomic.Pointer[trustFiles]
	// made is the network settings the Manager was made with, of which
	// it keeps what srt reads when it starts (settings.ReadBySRT).
	made *settings.Network
	// started is the network settings the egress started with (what
	// srt-proxy reads when it starts, settings.ReadByProxy), once it has.
	started atomic.Pointer[settings.Network]
}

func (n *network) remember(label, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.texts == nil {
		n.texts = map[string]string{}
	}
	if _, ok := n.texts[label]; !ok {
		n.order = append(n.order, label)
		if len(n.order) > 1024 {
			delete(n.texts, n.order[0])
			n.order = n.order[1:]
		}
	}
	n.texts[label] = text
}

// current is the running egress, if it has started.
func (n *network) current() *egress.Egress {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.eg
}

func (n *network) textOf(label string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.texts[label]
}

// proxyPlan is the proxy part of a command's plan.
func (m *Manager) proxyPlan(key string) *plan.Proxy {
	p := &plan.Proxy{HTTPPort: httpProxyPort, SOCKSPort: socksProxyPort, User: srtlink.UserFor(key), Token: m.net.token,
		HTTPExternal: m.net.ext.http != 0, SOCKSExternal: m.net.ext.socks != 0}
	if m.net.helper != "" {
		p.Connect = []string{m.net.helper, "--srt-connect=v1"}
	}
	return p
}

// egress starts the decider and the proxy once: at the first connection a
// sandbox makes, or, under network.tlsTerminate, before the first command
// is planned (its plan needs the trust bundle srt-proxy writes).
func (m *Manager) egress() (*egress.Egress, error) {
	m.net.once.Do(func() {
		cfg := m.Config()
		decider := ""
		if m.net.ext.ownProxy() {
			if decider, m.net.err = startProgram(m.opts.DeciderExecutable, "decider", "DeciderExecutable"); m.net.err != nil {
				return
			}
		}
		proxy, err := startProgram(m.opts.ProxyExecutable, "srt-proxy", "ProxyExecutable")
		if err != nil {
			m.net.err = err
			return
		}
		ec := m.egressConfig(cfg)
		ec.DeciderPath, ec.ProxyPath = decider, proxy
		var trust *trustFiles
		if ec.TLS != nil {
			if trust, m.net.err = newTrustFiles(ec.TLS); m.net.err != nil {
				return
			}
		}
		eg, err := egress.Start(ec)
		if err != nil {
			m.net.err = startError(err)
			if trust != nil {
				placeholders.RemoveRunDir(trust.dir)
			}
			return
		}
		m.net.started.Store(&cfg.Network)
		if trust != nil {
			readyTrust(trust)
			m.net.trust.Store(trust)
		}
		// Lists registered before the egress started go to the decider
		// before any connection is handed over; one registered from now on
		// finds m.net.eg set and goes itself.
		m.net.regMu.Lock()
		m.net.mu.Lock()
		m.net.eg = eg
		lists := maps.Clone(m.net.lists)
		m.net.mu.Unlock()
		for id, l := range lists {
			eg.Register(id, l)
		}
		m.net.regMu.Unlock()
		// An update made while the egress was starting found no egress
		// to tell.
		if now := m.Config(); now != cfg {
			eg.Update(networkOf(now), m.opts.Ask != nil)
		}
	})
	return m.net.eg, m.net.err
}

// egressConfig is what the egress starts with under cfg, but for the
// programs' paths and the trust bundle's (newTrustFiles). Of the settings,
// what goes to srt-proxy's command line (egress.Config.ProxyFlags) is
// exactly the keys settings.Keys says srt-proxy reads when it starts
// (settings.ReadByProxy); the decider gets the lists.
func (m *Manager) egressConfig(cfg *settings.Config) egress.Config {
	ec := egressSettings(cfg)
	ec.Ask, ec.Token = m.opts.Ask != nil, m.net.token
	ec.VerdictTimeout = m.verdictTimeout()
	ec.Debug, ec.Stderr = m.opts.Debug, m.opts.Warnings
	ec.OnViolation, ec.OnAsk = m.violation, m.ask
	// With every port relayed to an external proxy there is nothing
	// for srt to decide: srt-proxy runs alone.
	ec.RelayOnly = !m.net.ext.ownProxy()
	// TLS termination is srt's own HTTP proxy's (the settings refuse it
	// with httpProxyPort; an update cannot bring it back).
	if t := cfg.Network.TLSTerminate; t != nil && m.net.ext.http == 0 {
		ec.TLS = tlsFlags(t)
	}
	return ec
}

func (m *Manager) verdictTimeout() time.Duration {
	if m.opts.Ask != nil {
		return 10 * time.Minute // a person may be answering
	}
	return 0
}

// SyncViolations returns once every violation of the commands that have
// finished has been recorded (the decider sends them asynchronously).
func (m *Manager) SyncViolations() {
	if eg := m.net.current(); eg != nil {
		eg.Sync(2 * time.Second)
	}
}

// violation records one from the decider.
func (m *Manager) violation(line, user string) {
	label := srtlink.UserLabel(user)
	text := m.net.textOf(label)
	if Ignored(m.Config().IgnoreViolations, line, text) {
		return
	}
	v := Violation{Line: line, Command: text, Key: label, Time: time.Now()}
	m.violations.Add(v)
	if m.opts.OnViolation != nil {
		m.opts.OnViolation(v)
	}
}

// ask relays a question to the host's ask callback.
func (m *Manager) ask(host string, port int, user string) (bool, string) {
	if m.opts.Ask == nil {
		return false, ""
	}
	allow, reason, err := m.opts.Ask(AskRequest{Host: host, Port: port, Command: m.net.textOf(srtlink.UserLabel(user))})
	if err != nil {
		return false, "permission prompt failed"
	}
	return allow, cutReason(reason)
}

// cutReason sanitises an ask callback's reason and cuts it to 500 UTF-16
// units without splitting a surrogate pair.
func cutReason(s string) string {
	s = sanitize.Line(s)
	u := utf16.Encode([]rune(s))
	if len(u) > 500 {
		u = u[:500]
		if r := u[499]; r >= 0xd800 && r < 0xdc00 {
			u = u[:499]
		}
		s = string(utf16.Decode(u))
	}
	return strings.TrimSpace(s)
}

// serveListeners hands the sandbox's listening sockets to the proxy the
// first time one has a connection waiting, and takes them back when the
// command is done. Until then a connection waits in the backlog.
func (m *Manager) serveListeners(c *Cmd, id string) {
	ns := c.ns
	files := append(append(append([]*os.File(nil), ns.Proxy...), ns.Capture...), ns.DNS...)
	if len(files) == 0 {
		return
	}
	// Handed over or not, srt's copies go once this returns: srt-proxy
	// has its own, and with none, a connection made inside is refused
	// rather than left waiting (the proxy that could not start).
	defer ns.CloseSockets()
	if !waitReadable(files, c.done) {
		return
	}
	eg, err := m.egress()
	if err != nil {
		fmt.Fprintf(m.opts.Warnings, "srt: the network proxy could not start, so the sandbox has no network: %v\n", err)
		return
	}
	if err := m.net.ext.handOver(eg, id, ns.Proxy, c.proxyPorts()); err != nil {
		fmt.Fprintf(m.opts.Warnings, "srt: the network proxy could not take the sandbox's listeners: %v\n", err)
		return
	}
	if err := eg.AddCapture(id, c.user, c.loopback, ns.Capture, ns.DNS); err != nil {
		fmt.Fprintf(m.opts.Warnings, "srt: the network proxy could not take the sandbox's capture and DNS sockets: %v\n", err)
		return
	}
	<-c.done
	eg.RemoveListeners(id)
}
