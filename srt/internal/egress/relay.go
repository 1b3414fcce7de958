package egress

import (
	"fmt"
	"net"
	"os"
	"os/exec"

	"github.com/srt-sandbox/decider/srtlink"
)

// AddRelay hands srt-proxy listening sockets of a sandbox whose
// connections it relays byte for byte to the external proxy on this
// host's localhost:port; setting is the key that names the port
// ("httpProxyPort"), which srt-proxy's warning names when nothing accepts
// there. RemoveListeners closes them with the sandbox's others.
func (e *Egress) AddRelay(id string, port int, setting string, files []*os.File) error {
	return e.sendHandoff(srtlink.Message{T: srtlink.TListen, ID: id, Relay: &srtlink.Relay{Port: port, Setting: setting}}, files)
}

// startRelayOnly starts srt-proxy alone, without a decider or credentials
// (Config.RelayOnly), and waits for its "ready".
func startRelayOnly(cfg Config) (*Egress, error) {
	ours, theirs, err := pair()
	if err != nil {
		return nil, err
	}
	defer theirs.Close()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, err
	}
	e := &Egress{cfg: cfg, exited: make(chan struct{}), handoff: conn.(*net.UnixConn)}
	flags := cfg.ProxyFlags()
	e.proxy = exec.Command(cfg.ProxyPath, flags.Args()...)
	e.proxy.ExtraFiles = []*os.File{theirs}
	e.proxy.Env = cfg.childEnv()
	e.proxy.Stderr = cfg.Stderr
	e.proxy.SysProcAttr = childAttr()
	if err := e.proxy.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("egress: starting srt-proxy (%s): %w", cfg.ProxyPath, err)
	}
	theirs.Close()
	go func() {
		e.proxy.Wait()
		close(e.exited)
	}()
	if err := e.waitReady(readyTimeout); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}
