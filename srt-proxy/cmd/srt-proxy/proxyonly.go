package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/decide"
	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/link"
	"github.com/srt-sandbox/srt-proxy/internal/metrics"
	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/proxyonly"
	render "github.com/srt-sandbox/srt-proxy/internal/proxy/refusal" // "refusal" is a helper of the tests
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	tlsterm "github.com/srt-sandbox/srt-proxy/internal/proxy/terminate" // "terminate" is a function of this package
)

// runProxyOnly serves proxy-only mode until it is told to stop, and
// returns the exit code. What it says on stderr:
//
//	srt proxy: serving 127.0.0.1:8080     (or "serving fd 3"), once the decider said hello
//	srt proxy: stopped (<why>)            why: SIGTERM, SIGINT, lifeline closed, lifeline
//	                                      error, decider: <reason>, closed → exit 0;
//	                                      start failed: <msg> → exit 1
func runProxyOnly(o *proxyOnlyOpts, stderr io.Writer) int {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, usagePrefix+format+"\n", a...) }
	for _, w := range o.warnings {
		say("%s", w)
	}
	var ca *mitm.CA
	if o.caFD >= 0 {
		var err error
		if ca, err = readCA(o.caFD); err != nil {
			say("%v", err)
			return exitUsage
		}
	}
	stop := make(chan string, 4)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		stop <- map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[s]
	}()
	if o.lifelineFD >= 0 {
		go watchLifeline(openFD(o.lifelineFD, "lifeline"), stop)
	}
	stopped := func(why string) int {
		say("stopped (%s)", why)
		if len(why) >= len("start failed") && why[:len("start failed")] == "start failed" {
			return exitStart
		}
		return exitOK
	}

	// The decider's hello first: the listeners open only after it.
	ctx, cancel := context.WithCancel(context.Background())
	type dialed struct {
		l   *link.Link
		err error
	}
	got := make(chan dialed, 1)
	// In line framing the proxy offers srt.v1, so that a decider that takes
	// it can replace the host gate's lists while it runs (update), add
	// deniedResolvedAddresses to the address check, and hear of the
	// requests refused after its allow (refused). The gate and the address
	// check are made only after the hello: an update meanwhile is applied
	// once they exist.
	gate := &gateUpdates{}
	go func() {
		l, err := link.DialContext(ctx, deciderStream(o.deciderIn, o.deciderOut), link.Config{Framing: o.framing, OfferExt: true, Timeout: o.verdictTimeout, OnUpdate: gate.update})
		got <- dialed{l, err}
	}()
	var l *link.Link
	select {
	case d := <-got:
		cancel()
		if d.err != nil {
			return stopped(d.err.Error()) // "decider: bad hello", "decider: decider closed the stream"
		}
		l = d.l
	case why := <-stop:
		cancel()
		<-got
		return stopped(why)
	}
	defer l.Close()

	hello := l.Hello()
	po, err := decide.NewHostGate(hello.AllowedDomains, hello.DeniedDomains)
	if err != nil {
		return stopped("start failed: the decider's hello: " + err.Error())
	}
	addrs := decide.ProxyOnlyAddresses()
	addrs.Set(hello)
	gate.start(po, addrs)
	srv := &proxy.Server{
		Asker:        &decide.Asker{Link: l},
		Dialer:       &dial.Dialer{Policy: addrs.Policy},
		Mode:         render.ProxyOnlyMode{},
		MaxHeadBytes: proxyonly.HeadLimit,
		ProxyOnly:    po,
		// The fixed policy (§2.2): nothing it cannot inspect is tunnelled,
		// the Host must name the target, targets go as spelled.
		Rules: rules.Rules{
			RefuseOpaqueTunnels:  true,
			RequireHostMatch:     true,
			AmbiguousTarget:      rules.TargetAsSpelled,
			StripResponseHeaders: o.strip,
			PlaintextHeaderSet:   o.plaintextHeaderSet,
			PlaintextInject:      o.plaintextInject,
			SigV4Streaming:       o.sigv4Streaming,
			SigV4Presigned:       o.sigv4Presigned,
			SigV4A:               o.sigv4A,
		},
		Logger: debugLogger(o.debug, "srt proxy:", stderr),
		Warn:   func(text string) { say("warning: %s", text) },
	}
	if ca != nil {
		srv.TLS = &tlsterm.Terminate{CA: ca}
	}
	var m *metrics.Metrics
	if o.metrics.text != "" {
		m = metrics.New()
		srv.Observer, srv.Asker = m, metrics.Asker{Asker: srv.Asker, Metrics: m}
	}
	listeners, names, err := o.openListeners()
	if err != nil {
		return stopped("start failed: " + err.Error())
	}
	metricsAddr := ""
	if m != nil {
		var ms *http.Server
		if ms, metricsAddr, err = serveMetrics(o.metrics, m); err != nil {
			for _, ln := range listeners {
				ln.Close()
			}
			return stopped("start failed: --metrics-listen: " + err.Error())
		}
		defer ms.Close()
	}
	for i, ln := range listeners {
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, proxy.ErrServerClosed) {
				select { // a listener failed for good
				case stop <- "closed":
				default:
				}
			}
		}()
		say("serving %s", names[i])
	}
	if metricsAddr != "" {
		say("serving metrics on http://%s/metrics", metricsAddr)
	}
	var why string
	select {
	case why = <-stop:
	case <-l.Dead():
		why = "decider: " + l.Err().Error()
	}
	srv.Shutdown()
	return stopped(why)
}

// gateUpdates applies the decider's srt.v1 updates to the host gate and
// the address check. The link delivers updates in order, on one goroutine.
type gateUpdates struct {
	mu      sync.Mutex
	po      *decide.HostGate
	addrs   *decide.Addresses
	pending *link.Lists // an update before start
}

func (g *gateUpdates) update(l link.Lists) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.po == nil {
		g.pending = &l
		return
	}
	g.apply(l)
}

// start applies updates from now on, first one that came before.
func (g *gateUpdates) start(po *decide.HostGate, addrs *decide.Addresses) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.po, g.addrs = po, addrs
	if g.pending != nil {
		g.apply(*g.pending)
		g.pending = nil
	}
}

// apply sets both from an update. The codec checked its lists against the
// hello's grammar, which the gate reads (lists it refuses change nothing).
func (g *gateUpdates) apply(l link.Lists) {
	g.po.Update(l.AllowedDomains, l.DeniedDomains)
	g.addrs.Set(l)
}

// openListeners turns the listening descriptors into listeners and binds
// --listen; names are what "serving …" says of each.
func (o *proxyOnlyOpts) openListeners() ([]net.Listener, []string, error) {
	var (
		lns   []net.Listener
		names []string
	)
	fail := func(err error) ([]net.Listener, []string, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, nil, err
	}
	for _, fd := range append(append([]int(nil), o.listenFDs...), o.activated...) {
		ln, err := fdListener(fd)
		if err != nil {
			return fail(err)
		}
		lns = append(lns, ln)
		names = append(names, "fd "+strconv.Itoa(fd))
	}
	if o.listen.text != "" {
		ln, err := o.listen.open()
		if err != nil {
			return fail(err)
		}
		lns = append(lns, ln)
		a := ln.Addr().(*net.TCPAddr)
		// As the reference prints it: the address, a colon, the port (no
		// brackets around IPv6).
		names = append(names, a.IP.String()+":"+strconv.Itoa(a.Port))
	}
	return lns, names, nil
}

// open binds the address. An address literal binds its own family only
// ("0.0.0.0" is not also "::").
func (a hostPort) open() (net.Listener, error) {
	network := "tcp"
	if ip, err := netip.ParseAddr(a.host); err == nil {
		network = map[bool]string{true: "tcp4", false: "tcp6"}[ip.Is4()]
	}
	return net.Listen(network, net.JoinHostPort(a.host, strconv.Itoa(a.port)))
}

// serveMetrics serves m at http://a/metrics (nothing else is served
// there); addr is the address bound, as a URL writes it.
func serveMetrics(a hostPort, m *metrics.Metrics) (srv *http.Server, addr string, err error) {
	ln, err := a.open()
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	return srv, ln.Addr().String(), nil
}
