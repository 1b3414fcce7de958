// Package egress runs the network side of srt's sandboxes: the reference
// decider and srt-proxy, outside every sandbox, joined by a socket pair.
// srt talks to the decider over the control channel (decider/control) and
// hands srt-proxy the listening sockets each sandbox makes
// (srt-proxy/internal/handoff's line format). Both processes end when srt
// does: each treats the end of its channel from srt as the signal to stop.
//
//	srt ──control──▶ decider ◀──decider protocol──▶ srt-proxy ◀──handoff── srt
//	                                                   ▲
//	                       sandbox: 127.0.0.1:3128/1080 (accepted from outside)
package egress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/control"
)

// Config says how to run the egress processes.
type Config struct {
	DeciderPath, ProxyPath string
	Network                control.Network
	// Ask says whether the host answers questions no rule decides.
	Ask bool
	// Token is the proxy credential the sandboxes use.
	Token string
	// Parent is the upstream proxy srt-proxy chains through, if any.
	ParentHTTP, ParentHTTPS, NoProxy string
	// VerdictTimeout bounds a request's wait for its verdict (0: srt-proxy's
	// default of 5 s).
	VerdictTimeout time.Duration
	Debug          bool
	Stderr         io.Writer
	// OnViolation receives every refusal the decider records.
	OnViolation func(line, user string)
	// OnAsk answers a question no rule decides.
	OnAsk func(host string, port int, user string) (allow bool, reason string)
}

// Egress is the running decider and proxy.
type Egress struct {
	cfg     Config
	decider *exec.Cmd
	proxy   *exec.Cmd
	ctl     *control.Conn
	ctlConn net.Conn
	handoff *net.UnixConn

	mu     sync.Mutex
	closed bool
	exited chan struct{}
	syncs  map[uint64]chan struct{}
	nextQ  uint64
}

// ErrStopped is returned once the egress processes are gone.
var ErrStopped = errors.New("egress: the proxy processes have stopped")

// Start starts the decider and the proxy. They are ready when Start
// returns: the decider has its config, and the proxy will accept as soon
// as it has listeners (a connection made before waits in the backlog).
func Start(cfg Config) (*Egress, error) {
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	pair := func() (*os.File, *os.File, error) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b"), nil
	}
	decP, proxyD, err := pair() // decider ↔ proxy
	if err != nil {
		return nil, err
	}
	defer decP.Close()
	defer proxyD.Close()
	ctlOurs, ctlDec, err := pair() // srt ↔ decider
	if err != nil {
		return nil, err
	}
	defer ctlDec.Close()
	hoOurs, hoProxy, err := pair() // srt ↔ proxy
	if err != nil {
		ctlOurs.Close()
		return nil, err
	}
	defer hoProxy.Close()

	e := &Egress{cfg: cfg, exited: make(chan struct{})}
	ctlConn, err := net.FileConn(ctlOurs)
	ctlOurs.Close()
	if err != nil {
		hoOurs.Close()
		return nil, err
	}
	e.ctlConn = ctlConn
	e.ctl = control.New(ctlConn)
	hoConn, err := net.FileConn(hoOurs)
	hoOurs.Close()
	if err != nil {
		ctlConn.Close()
		return nil, err
	}
	e.handoff = hoConn.(*net.UnixConn)

	// The config goes first: the decider answers the proxy's hello only
	// once it has one.
	if err := e.ctl.Write(&control.Message{T: control.TConfig, Network: &cfg.Network, Ask: cfg.Ask}); err != nil {
		e.Close()
		return nil, err
	}
	dargs := []string{"--proxy-fd", "3", "--control-fd", "4"}
	if cfg.Debug {
		dargs = append(dargs, "-d")
	}
	e.decider = exec.Command(cfg.DeciderPath, dargs...)
	e.decider.ExtraFiles = []*os.File{decP, ctlDec}
	e.decider.Stderr = cfg.Stderr
	e.decider.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := e.decider.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("egress: starting the decider (%s): %w", cfg.DeciderPath, err)
	}
	pargs := []string{"--srt-mode", "--decider-fd", "3", "--control-fd", "4"}
	if cfg.ParentHTTP != "" {
		pargs = append(pargs, "--parent-http", cfg.ParentHTTP)
	}
	if cfg.ParentHTTPS != "" {
		pargs = append(pargs, "--parent-https", cfg.ParentHTTPS)
	}
	if cfg.NoProxy != "" {
		pargs = append(pargs, "--no-proxy", cfg.NoProxy)
	}
	if cfg.VerdictTimeout > 0 {
		pargs = append(pargs, "--verdict-timeout", cfg.VerdictTimeout.String())
	}
	if cfg.Debug {
		pargs = append(pargs, "-d")
	}
	e.proxy = exec.Command(cfg.ProxyPath, pargs...)
	e.proxy.ExtraFiles = []*os.File{proxyD, hoProxy}
	e.proxy.Env = append(os.Environ(), "SRT_PROXY_TOKEN="+cfg.Token)
	e.proxy.Stderr = cfg.Stderr
	e.proxy.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := e.proxy.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("egress: starting srt-proxy (%s): %w", cfg.ProxyPath, err)
	}
	go e.controlLoop()
	go func() {
		e.proxy.Wait()
		e.decider.Wait()
		close(e.exited)
	}()
	return e, nil
}

// controlLoop receives the decider's violations and questions.
func (e *Egress) controlLoop() {
	for {
		m, err := e.ctl.Read()
		if err != nil {
			return
		}
		switch m.T {
		case control.TViolation:
			if e.cfg.OnViolation != nil {
				e.cfg.OnViolation(m.Line, m.User)
			}
		case control.TSync:
			e.mu.Lock()
			ch := e.syncs[m.Q]
			delete(e.syncs, m.Q)
			e.mu.Unlock()
			if ch != nil {
				close(ch)
			}
		case control.TAsk:
			go func(m *control.Message) {
				allow, reason := false, ""
				if e.cfg.OnAsk != nil {
					allow, reason = e.cfg.OnAsk(m.Host, m.Port, m.User)
				}
				e.ctl.Write(&control.Message{T: control.TAnswer, Q: m.Q, Allow: allow, Reason: reason})
			}(m)
		}
	}
}

// Sync returns once every message the decider sent before has been
// handled (every violation recorded), or after timeout.
func (e *Egress) Sync(timeout time.Duration) {
	ch := make(chan struct{})
	e.mu.Lock()
	if e.syncs == nil {
		e.syncs = map[uint64]chan struct{}{}
	}
	e.nextQ++
	q := e.nextQ
	e.syncs[q] = ch
	e.mu.Unlock()
	if e.ctl.Write(&control.Message{T: control.TSync, Q: q}) != nil {
		return
	}
	select {
	case <-ch:
	case <-time.After(timeout):
	}
}

// AddListeners hands a sandbox's listening sockets to the proxy.
func (e *Egress) AddListeners(id string, files []*os.File) error {
	return e.sendHandoff(map[string]string{"t": "listen", "id": id}, files)
}

// RemoveListeners closes a sandbox's listening sockets in the proxy.
func (e *Egress) RemoveListeners(id string) error {
	return e.sendHandoff(map[string]string{"t": "close", "id": id}, nil)
}

func (e *Egress) sendHandoff(m map[string]string, files []*os.File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrStopped
	}
	if _, _, err := e.handoff.WriteMsgUnix(append(b, '\n'), oob, nil); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	return nil
}

// Update replaces the network lists; the next connection uses them.
func (e *Egress) Update(n control.Network, ask bool) error {
	return e.ctl.Write(&control.Message{T: control.TConfig, Network: &n, Ask: ask})
}

// Register gives a command its own allow list.
func (e *Egress) Register(id string, allowed []string) error {
	return e.ctl.Write(&control.Message{T: control.TRegister, ID: id, AllowedDomains: allowed})
}

// Unregister removes a command's own allow list.
func (e *Egress) Unregister(id string) error {
	return e.ctl.Write(&control.Message{T: control.TUnregister, ID: id})
}

// Exited is closed once both processes have exited.
func (e *Egress) Exited() <-chan struct{} { return e.exited }

// Close stops both processes: closing the channels is their signal; they
// are killed if they linger.
func (e *Egress) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	if e.ctlConn != nil {
		e.ctlConn.Close()
	}
	if e.handoff != nil {
		e.handoff.Close()
	}
	if e.proxy == nil || e.proxy.Process == nil {
		if e.decider != nil && e.decider.Process != nil {
			e.decider.Process.Kill()
			e.decider.Wait()
		}
		return nil
	}
	select {
	case <-e.exited:
	case <-time.After(2 * time.Second):
		e.proxy.Process.Kill()
		e.decider.Process.Kill()
		<-e.exited
	}
	return nil
}
