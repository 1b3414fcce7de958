package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/decide"
	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/link"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	render "github.com/srt-sandbox/srt-proxy/internal/proxy/refusal" // "refusal" is a helper of the tests
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	tlsterm "github.com/srt-sandbox/srt-proxy/internal/proxy/terminate" // "terminate" is a function of this package
)

// srtOptions are the settings of srt's mode: its flags, and the request
// options as the proxy takes them.
type srtOptions struct {
	srtlink.ProxyFlags
	rules rules.Rules
}

// targetModes are the values of --ambiguous-target (srtlink.AmbiguousTargets).
var targetModes = map[string]rules.TargetMode{
	"refuse": rules.TargetRefuse, "asSpelled": rules.TargetAsSpelled, "normalize": rules.TargetNormalize,
}

// srtOptionsOf is the settings of srt's mode that f gives (checked by
// srtlink.ParseProxyFlags).
func srtOptionsOf(f srtlink.ProxyFlags) srtOptions {
	r := f.Rules
	o := srtOptions{ProxyFlags: f, rules: rules.Rules{
		RefuseOpaqueTunnels: r.RefuseOpaqueTunnels, RequireHostMatch: r.RequireHostMatch,
		StripResponseHeaders: r.StripResponseHeaders, PlaintextHeaderSet: r.PlaintextHeaderSet,
		PlaintextInject: f.PlaintextInject,
	}}
	// srtlink.ParseProxyFlags let only SigV4Modes through ("" is deny).
	o.rules.SigV4Streaming, _ = rules.ParseSigV4Mode(f.SigV4Streaming)
	o.rules.SigV4Presigned, _ = rules.ParseSigV4Mode(f.SigV4Presigned)
	o.rules.SigV4A, _ = rules.ParseSigV4Mode(f.SigV4A)
	if r.AmbiguousTarget != "" {
		o.rules.AmbiguousTarget, o.rules.CheckPlainTargets = targetModes[r.AmbiguousTarget], true
	}
	return o
}

// runSRT serves srt's mode: listeners arrive over the control channel, the
// decider is the reference decider srt started, and the end of the control
// channel means srt is gone. Once it serves (or cannot), it tells srt on
// the control channel: "ready", or "failed" and why (srtlink.Ready,
// srtlink.Failed).
func runSRT(o srtOptions) error {
	token := os.Getenv(srtlink.TokenEnv)
	os.Unsetenv(srtlink.TokenEnv)
	dec := os.NewFile(uintptr(o.DeciderFD), "decider")
	ctlFile := os.NewFile(uintptr(o.ControlFD), "control")
	if dec == nil || ctlFile == nil {
		return errors.New("bad descriptor")
	}
	ctlConn, err := net.FileConn(ctlFile)
	ctlFile.Close()
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	ctl, ok := ctlConn.(*net.UnixConn)
	if !ok {
		return errors.New("control: not a Unix socket")
	}
	srv, l, err := startSRT(o, dec, token)
	if err != nil {
		var se *startError
		setting := ""
		if errors.As(err, &se) {
			setting = se.setting
		}
		srtlink.Failed(ctl, setting, err)
		return err
	}
	if err := srtlink.Ready(ctl); err != nil {
		srv.Shutdown()
		l.Close()
		return fmt.Errorf("control: %w", err)
	}
	stop := make(chan error, 3)
	stopping := make(chan struct{})
	go func() {
		// In srt's mode the proxy outlives a dead decider and refuses every
		// request (503, "request decider: <why>"), so the command sees why;
		// it stops when srt does.
		<-l.Dead()
		// When srt exits, the decider goes first: say nothing then.
		select {
		case <-stopping:
			return
		case <-time.After(200 * time.Millisecond):
		}
		fmt.Fprintf(os.Stderr, "srt-proxy: the decider link is down (%v); every request is refused from now on\n", l.Err())
	}()
	go func() {
		err := serveHandoff(ctl, srv, l, newRelays(o.Debug), newRoles(srv))
		close(stopping)
		stop <- err
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { stop <- fmt.Errorf("%v", <-sigs) }()
	why := <-stop
	srv.Shutdown()
	l.Close()
	return why
}

// startSRT sets up what srt's mode serves with: TLS termination (the CA
// and the trust bundle first: their errors are settings errors srt shows
// before any command runs), the decider link, the parent proxy.
func startSRT(o srtOptions, dec *os.File, token string) (*proxy.Server, *link.Link, error) {
	log := debugLogger(o.Debug, "srt-proxy:", os.Stderr)
	var term *tlsterm.Terminate
	if o.TLS != nil {
		var err error
		if term, err = terminate(o.TLS, log); err != nil {
			return nil, nil, err
		}
	}
	parent, err := parentProxy(o)
	if err != nil {
		return nil, nil, err
	}
	mitmProxy, err := mitmProxyOf(o.MITM)
	if err != nil {
		return nil, nil, err
	}
	addrs := &decide.Addresses{}
	l, err := link.Dial(dec, link.Config{Framing: protocol.Line, OfferExt: true, Timeout: o.VerdictTimeout, OnUpdate: addrs.Set}, helloWait)
	if err != nil {
		return nil, nil, err
	}
	addrs.Set(l.Hello())
	srv := &proxy.Server{
		Asker:  &decide.Asker{Link: l},
		Dialer: &dial.Dialer{Policy: addrs.Policy, Parent: parent, MITM: mitmProxy},
		Token:  token,
		Mode:   render.SRTMode{},
		TLS:    term,
		Rules:  o.rules,
		Logger: log,
		Warn:   func(text string) { fmt.Fprintln(os.Stderr, srtModeTitle+"warning: "+text) },
	}
	return srv, l, nil
}

// serveHandoff serves every listener srt hands over (or relays it, when
// the message says so; or serves it as a capture listener or a name server
// socket, by its role), closes those of a sandbox that ended, and passes
// srt's syncs to the decider behind what the proxy told it (violations of
// refusals made after an allow). srv, l and roles are nil when srt-proxy
// only relays (runRelayOnly).
func serveHandoff(c *net.UnixConn, srv *proxy.Server, l *link.Link, relays *relays, roles *roles) error {
	r := srtlink.NewReceiver(c)
	var mu sync.Mutex
	bySandbox := map[string][]io.Closer{}
	for {
		m, files, err := r.Receive()
		if errors.Is(err, srtlink.ErrEndOfStream) {
			return errors.New("srt closed the control channel")
		}
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		switch m.T {
		case srtlink.TListen:
			if m.Role != srtlink.RoleProxy {
				closers, err := roles.serve(m, files)
				if err != nil {
					return fmt.Errorf("control: %w", err)
				}
				mu.Lock()
				bySandbox[m.ID] = append(bySandbox[m.ID], closers...)
				mu.Unlock()
				continue
			}
			for _, f := range files {
				ln, err := net.FileListener(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("control: %w", err)
				}
				serve, err := relays.server(m.Relay, srv)
				if err != nil {
					ln.Close()
					return fmt.Errorf("control: %w", err)
				}
				mu.Lock()
				bySandbox[m.ID] = append(bySandbox[m.ID], ln)
				mu.Unlock()
				go serve(ln)
			}
		case srtlink.TClose:
			closeAll(files) // a close carries none
			mu.Lock()
			for _, c := range bySandbox[m.ID] {
				c.Close()
			}
			delete(bySandbox, m.ID)
			mu.Unlock()
			roles.forget(m.ID)
		case srtlink.TSync:
			closeAll(files) // a sync carries none
			if l != nil {
				l.Sync(m.Q)
			}
		default:
			closeAll(files)
			return fmt.Errorf("control: unknown message %q", m.T)
		}
	}
}

// closeAll closes the files that came with a message that takes none.
func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// mitmProxyOf is network.mitmProxy (nil when the flags give none). A path
// that is there but is no socket is a settings error; a missing one is
// not (the MITM proxy may start later), and each connection through it
// fails, naming the socket.
func mitmProxyOf(m *srtlink.MITM) (*dial.MITMProxy, error) {
	if m == nil {
		return nil, nil
	}
	if err := dial.CheckSocket(m.Socket); err != nil {
		return nil, &startError{setting: "mitmProxy.socketPath", err: err}
	}
	takes, err := decide.HostPatterns("mitmProxy.domains", m.Domains)
	if err != nil {
		return nil, &startError{setting: "mitmProxy", err: err}
	}
	return &dial.MITMProxy{Socket: m.Socket, Takes: takes}, nil
}

func parentProxy(o srtOptions) (*dial.ParentProxy, error) {
	if o.ParentHTTP == "" && o.ParentHTTPS == "" {
		return nil, nil
	}
	p := &dial.ParentProxy{All: o.ParentAll}
	var err error
	if o.ParentHTTP != "" {
		if p.HTTP, err = dial.ParseParentURL(o.ParentHTTP); err != nil {
			return nil, fmt.Errorf("--parent-http: %w", err)
		}
	}
	if o.ParentHTTPS != "" {
		if p.HTTPS, err = dial.ParseParentURL(o.ParentHTTPS); err != nil {
			return nil, fmt.Errorf("--parent-https: %w", err)
		}
	}
	if o.NoProxy != "" {
		p.NoProxy = dial.ParseNoProxy(o.NoProxy)
	}
	return p, nil
}
