// Package egress runs the network side of srt's sandboxes: the reference
// decider and srt-proxy, outside every sandbox, joined by a socket pair.
// srt talks to the decider over the control channel (decider/control) and
// hands srt-proxy the listening sockets each sandbox makes over the handoff
// channel; the handoff's lines, srt-proxy's command line and the
// attribution user are decider/srtlink's. Both processes end when srt
// does: each treats the end of its channel from srt as the signal to stop
// (on Linux the kernel also kills them when srt dies; macOS has no such
// signal, and the end of the channel is all there is: TestChildrenEndWithSrt).
//
//	srt ──control──▶ decider ◀──decider protocol──▶ srt-proxy ◀──handoff── srt
//	                                                   ▲
//	                       sandbox: 127.0.0.1:3128/1080 (accepted from outside)
package egress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/srtlink"
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
	// ParentAll: every destination through the parent, loopback and
	// NoProxy's included (srtlink.ProxyFlags.ParentAll).
	ParentAll bool
	// VerdictTimeout bounds a request's wait for its verdict (0: srt-proxy's
	// default of 5 s).
	VerdictTimeout time.Duration
	Debug          bool
	Stderr         io.Writer
	// OnViolation receives every refusal the decider records.
	OnViolation func(line, user string)
	// OnAsk answers a question no rule decides.
	OnAsk func(host string, port int, user string) (allow bool, reason string)
	// Rules are the request options srt-proxy applies; TLS, when set, turns
	// TLS termination on. srt-proxy reads both when it starts.
	Rules srtlink.Rules
	TLS   *srtlink.TLS
	// MITM, when set, sends the hosts it names to the user's MITM proxy
	// (network.mitmProxy); srt-proxy reads it when it starts.
	MITM *srtlink.MITM
	// PlaintextInject and SigV4* are credentials.allowPlaintextInject and
	// credentials.sigv4 (srtlink.ProxyFlags's fields of the same names);
	// srt-proxy reads them when it starts.
	PlaintextInject                        bool
	SigV4Streaming, SigV4Presigned, SigV4A string
	// RelayOnly starts srt-proxy without a decider, to relay every
	// listener to an external proxy (AddRelay): both network.httpProxyPort
	// and socksProxyPort are set, so nothing is srt's to decide. Only
	// ProxyPath, Debug and Stderr matter then.
	RelayOnly bool
	// Scrub are variables of srt's environment the egress processes do
	// not inherit: the credentials srt masks or denies (their real values
	// reach srt-proxy only over the decider protocol).
	Scrub []string
}

// childEnv is srt's environment without the variables of Scrub.
func (c *Config) childEnv() []string {
	var env []string
outer:
	for _, kv := range os.Environ() {
		for _, name := range c.Scrub {
			if strings.HasPrefix(kv, name+"=") {
				continue outer
			}
		}
		env = append(env, kv)
	}
	return env
}

// StartError is srt-proxy's own account of why it could not start.
type StartError struct {
	// Setting is the settings key at fault ("tlsTerminate"), or "" when the
	// failure is not a settings error.
	Setting string
	Msg     string
}

func (e *StartError) Error() string { return e.Msg }

// readyTimeout bounds the wait for srt-proxy's "ready": its start, the
// decider's hello, and with TLS termination the CA and the trust bundle.
const readyTimeout = 20 * time.Second

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

// Start starts the decider and the proxy and waits until srt-proxy says it
// is ready (at most readyTimeout): the decider has its config and said
// hello, the CA is loaded and the trust bundle written, and the proxy
// accepts on every listener it is handed from then on. When srt-proxy
// says it failed, the error is a *StartError with its text.
func Start(cfg Config) (*Egress, error) {
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.RelayOnly {
		return startRelayOnly(cfg)
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
	e.decider.Env = cfg.childEnv()
	e.decider.Stderr = cfg.Stderr
	e.decider.SysProcAttr = childAttr()
	if err := e.decider.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("egress: starting the decider (%s): %w", cfg.DeciderPath, err)
	}
	flags := cfg.ProxyFlags()
	e.proxy = exec.Command(cfg.ProxyPath, flags.Args()...)
	e.proxy.ExtraFiles = []*os.File{proxyD, hoProxy}
	e.proxy.Env = append(cfg.childEnv(), srtlink.TokenEnv+"="+cfg.Token)
	e.proxy.Stderr = cfg.Stderr
	e.proxy.SysProcAttr = childAttr()
	if err := e.proxy.Start(); err != nil {
		e.Close()
		return nil, fmt.Errorf("egress: starting srt-proxy (%s): %w", cfg.ProxyPath, err)
	}
	// The children have their ends: ours would keep a child that lost its
	// peer from seeing the end of its stream while we wait.
	for _, f := range []*os.File{decP, proxyD, ctlDec, hoProxy} {
		f.Close()
	}
	go e.controlLoop()
	go func() {
		e.proxy.Wait()
		e.decider.Wait()
		close(e.exited)
	}()
	if err := e.waitReady(readyTimeout); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// waitReady reads srt-proxy's one line on the handoff channel: "ready",
// or "failed" and why (srtlink.Ready, srtlink.Failed).
func (e *Egress) waitReady(timeout time.Duration) error {
	e.handoff.SetReadDeadline(time.Now().Add(timeout))
	defer e.handoff.SetReadDeadline(time.Time{})
	var line []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(line, []byte{'\n'}) {
		n, err := e.handoff.Read(buf)
		line = append(line, buf[:n]...)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("egress: srt-proxy did not report ready within %v", timeout)
		case err != nil:
			return fmt.Errorf("egress: srt-proxy stopped before it was ready (%v)", err)
		case len(line) > 64<<10:
			return errors.New("egress: srt-proxy's ready line is too long")
		}
	}
	m, err := srtlink.Decode(line[:bytes.IndexByte(line, '\n')])
	if err != nil {
		return fmt.Errorf("egress: srt-proxy's ready line: %w", err)
	}
	switch m.T {
	case srtlink.TReady:
		return nil
	case srtlink.TFailed:
		return &StartError{Setting: m.Setting, Msg: m.Error}
	}
	return fmt.Errorf("egress: srt-proxy said %q instead of ready", m.T)
}

// ProxyFlags is srt-proxy's command line for c: the decider's socket is
// its descriptor 3 and the handoff channel 4, or, RelayOnly, the handoff
// channel 3 and no decider.
func (c *Config) ProxyFlags() srtlink.ProxyFlags {
	if c.RelayOnly {
		return srtlink.ProxyFlags{DeciderFD: -1, ControlFD: 3, Debug: c.Debug}
	}
	return srtlink.ProxyFlags{
		DeciderFD: 3, ControlFD: 4,
		ParentHTTP: c.ParentHTTP, ParentHTTPS: c.ParentHTTPS, NoProxy: c.NoProxy, ParentAll: c.ParentAll,
		VerdictTimeout: c.VerdictTimeout, Debug: c.Debug, Rules: c.Rules, TLS: c.TLS,
		MITM: c.MITM, PlaintextInject: c.PlaintextInject,
		SigV4Streaming: c.SigV4Streaming, SigV4Presigned: c.SigV4Presigned, SigV4A: c.SigV4A,
	}
}

// controlLoop receives the decider's violations and questions.
func (e *Egress) controlLoop() {
	for {
		m, err := e.ctl.Read()
		if errors.Is(err, control.ErrMessage) {
			// The decider is srt's own: a line it sends that srt cannot
			// read is a bug, said, not a reason to stop hearing it.
			fmt.Fprintf(e.cfg.Stderr, "srt: warning: the decider sent a line srt cannot read, ignored: %v\n", err)
			continue
		}
		if err != nil {
			e.mu.Lock()
			closed := e.closed
			e.mu.Unlock()
			if !closed && err != io.EOF {
				fmt.Fprintf(e.cfg.Stderr, "srt: warning: the decider's channel broke (%v): violations are no longer recorded and list updates cannot be confirmed\n", err)
			}
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

// Sync returns once every violation of what happened before has been
// recorded, or after timeout. It goes through srt-proxy (handoff "sync"),
// which passes it to the decider behind every refusal it told the decider
// about; the decider answers on the control channel once it has sent
// their violations.
func (e *Egress) Sync(timeout time.Duration) {
	if e.ctl == nil {
		return // no decider: no violations
	}
	q, ch := e.newSync()
	defer e.forgetSync(q)
	if e.sendHandoff(srtlink.Message{T: srtlink.TSync, Q: q}, nil) != nil {
		return
	}
	select {
	case <-ch:
	case <-e.exited:
	case <-time.After(timeout):
	}
}

// AddListeners hands a sandbox's listening sockets to the proxy.
func (e *Egress) AddListeners(id string, files []*os.File) error {
	return e.sendHandoff(srtlink.Message{T: srtlink.TListen, ID: id}, files)
}

// RemoveListeners closes a sandbox's listening sockets in the proxy.
func (e *Egress) RemoveListeners(id string) error {
	return e.sendHandoff(srtlink.Message{T: srtlink.TClose, ID: id}, nil)
}

// sendHandoff writes m with files attached, unless the egress is closed.
func (e *Egress) sendHandoff(m srtlink.Message, files []*os.File) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrStopped
	}
	if err := srtlink.Send(e.handoff, m, files); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	return nil
}

// Update replaces the network lists. It returns once the decider has
// them (it answers a sync sent after them): every connection a sandbox
// makes from then on is decided by them. srt-proxy's part of them, the
// address rules the decider passes on, is in force by then too for every
// connection that waits for a verdict: the decider sends the rules before
// any later verdict, on the stream srt-proxy reads in order.
func (e *Egress) Update(n control.Network, ask bool) error {
	if e.ctl == nil {
		return nil // no decider: the external proxies decide
	}
	if err := e.ctl.Write(&control.Message{T: control.TConfig, Network: &n, Ask: ask}); err != nil {
		return err
	}
	return e.controlSync(updateWait, "the updated lists")
}

// updateWait bounds the wait for the decider's answer to an update or a
// command's list: it parses the lists first (a list of 100 000 entries
// takes it a few hundred milliseconds).
const updateWait = 10 * time.Second

// Register gives a command its own allow list.
//
// It returns once the decider has the list: the decider reads its control
// channel in order, so the answer to a sync sent after it says so. (Without
// the wait a connection made at once could be decided before the list
// arrives.)
func (e *Egress) Register(id string, allowed []string) error {
	if e.ctl == nil {
		return nil
	}
	if err := e.ctl.Write(&control.Message{T: control.TRegister, ID: id, AllowedDomains: allowed}); err != nil {
		return err
	}
	return e.controlSync(updateWait, "the command's list")
}

// Masks gives the decider the masked credentials of the command whose key
// is id (control.TMasks). It returns once the decider has them: every
// request the command makes from then on may carry them.
func (e *Egress) Masks(id string, masks []control.Mask) error {
	if e.ctl == nil {
		return errors.New("egress: no decider runs, so no masked credential can be injected")
	}
	if err := e.ctl.Write(&control.Message{T: control.TMasks, ID: id, Masks: masks}); err != nil {
		return fmt.Errorf("egress: the command's masked credentials could not be sent to the decider: %w", err)
	}
	return e.controlSync(updateWait, "the command's masked credentials")
}

// Unregister removes a command's own allow list.
func (e *Egress) Unregister(id string) error {
	if e.ctl == nil {
		return nil
	}
	if err := e.ctl.Write(&control.Message{T: control.TUnregister, ID: id}); err != nil {
		return err
	}
	return e.controlSync(updateWait, "the removal of the command's list")
}

// newSync registers a sync: ch is closed when the decider answers q.
func (e *Egress) newSync() (q uint64, ch chan struct{}) {
	ch = make(chan struct{})
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.syncs == nil {
		e.syncs = map[uint64]chan struct{}{}
	}
	e.nextQ++
	e.syncs[e.nextQ] = ch
	return e.nextQ, ch
}

// forgetSync drops sync q, answered or not: an answer that comes later
// finds no one waiting.
func (e *Egress) forgetSync(q uint64) {
	e.mu.Lock()
	delete(e.syncs, q)
	e.mu.Unlock()
}

// controlSync returns once the decider has handled every control message
// written before it; what names them for the error of a decider that does
// not answer.
func (e *Egress) controlSync(timeout time.Duration, what string) error {
	q, ch := e.newSync()
	defer e.forgetSync(q)
	if err := e.ctl.Write(&control.Message{T: control.TSync, Q: q}); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-e.exited:
		return ErrStopped
	case <-time.After(timeout):
		return fmt.Errorf("egress: the decider did not confirm %s within %v", what, timeout)
	}
}

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
		if e.decider != nil {
			e.decider.Process.Kill()
		}
		<-e.exited
	}
	return nil
}
