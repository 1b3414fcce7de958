package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	"github.com/srt-sandbox/srt-proxy/internal/relay"
)

// relays are the external proxies srt's sandboxes use instead of
// srt-proxy's own (network.httpProxyPort, socksProxyPort): one
// relay.Relay per setting and port, shared by every sandbox's listeners,
// so that its bound on connections and its one-time warning hold for the
// whole run.
type relays struct {
	log zerolog.Logger
	mu  sync.Mutex
	by  map[string]*relay.Relay
}

func newRelays(debug bool) *relays {
	return &relays{log: debugLogger(debug, "srt-proxy:", os.Stderr), by: map[string]*relay.Relay{}}
}

// server is what serves a listener handed over with r: the relay r names,
// or srt-proxy's own proxy when r is nil.
func (rs *relays) server(r *srtlink.Relay, srv *proxy.Server) (func(net.Listener) error, error) {
	if r == nil {
		if srv == nil {
			return nil, errors.New("a listener to serve, but srt-proxy was started without a decider and only relays")
		}
		return srv.Serve, nil
	}
	if r.Port < 1 || r.Port > 65535 || r.Setting == "" {
		return nil, fmt.Errorf("bad relay %+v", *r)
	}
	key := r.Setting + ":" + strconv.Itoa(r.Port)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rl := rs.by[key]
	if rl == nil {
		rl = &relay.Relay{Port: r.Port, Setting: r.Setting, Logger: rs.log,
			Warn: func(line string) { fmt.Fprintln(os.Stderr, srtModeTitle+line) }}
		rs.by[key] = rl
	}
	return rl.Serve, nil
}

// runRelayOnly serves srt's mode without a decider: srt starts srt-proxy
// so when both network.httpProxyPort and socksProxyPort are set, and every
// listener it hands over is relayed. It is ready at once, and stops when
// srt closes the control channel (or on SIGTERM, SIGINT).
func runRelayOnly(o srtOptions) error {
	f := os.NewFile(uintptr(o.ControlFD), "control")
	if f == nil {
		return errors.New("bad descriptor")
	}
	conn, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	ctl, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return errors.New("control: not a Unix socket")
	}
	defer ctl.Close()
	if err := srtlink.Ready(ctl); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	stop := make(chan error, 2)
	go func() { stop <- serveHandoff(ctl, nil, nil, newRelays(o.Debug), nil) }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { stop <- fmt.Errorf("%v", <-sigs) }()
	return <-stop
}
