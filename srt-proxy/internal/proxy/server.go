package proxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/proxyonly"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/socks5"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// Server is the proxy. Its exported fields are its configuration and
// dependencies; set them before the first Serve and do not change them
// afterwards. Nil fields have safe defaults, except Asker, which is
// required.
type Server struct {
	Asker  ask.Asker    // the decider; required
	Dialer *dial.Dialer // opens every outbound connection; nil: a zero dial.Dialer
	// Token is the proxy credential of srt's own mode: HTTP requests and
	// CONNECTs need "Proxy-Authorization: Basic base64(user:Token)", SOCKS5
	// clients RFC 1929 with Token as the password. "" turns authentication
	// off.
	Token string
	Mode  refusal.Mode // renders refusals; nil: SRTMode
	// TLS terminates allowed CONNECTs (network.tlsTerminate); nil: every
	// CONNECT is an opaque tunnel (refused under Rules.RefuseOpaqueTunnels).
	TLS *terminate.Terminate
	// Rules are the request options (package rules).
	Rules rules.Rules
	// ProxyOnly is the host gate of proxy-only mode (package proxyonly);
	// nil is srt's own mode.
	ProxyOnly proxyonly.HostGate
	// Logger receives one decision line per connection or request; the
	// zero value discards them.
	Logger zerolog.Logger
	// UnauthenticatedSSHReason, when set, returns the text of the in-band
	// SSH refusal a SOCKS5 client that offered no username/password gets
	// for host:22 (for example a deniedDomains reason for that host); ""
	// keeps the default text. It must not ask anyone: the peer is not
	// authenticated.
	UnauthenticatedSSHReason func(host string, port int) string
	// MaxHeadBytes bounds an HTTP request head; 0 means 64 KiB. A longer
	// head is refused (CauseHeadTooLarge).
	MaxHeadBytes int
	// FirstByteTimeout bounds the wait for a new connection's first byte
	// and for a SOCKS5 handshake; 0 means 10 s.
	FirstByteTimeout time.Duration
	// Grace is how long Shutdown lets connections in flight finish; 0
	// means 1 s.
	Grace time.Duration
	// Observer, when set, is told what the server does (metrics); nil:
	// nothing is counted.
	Observer Observer
	// Warn, when set, is told what a user must fix that no client
	// request can (an upstream certificate nothing trusts: the CA to add),
	// once per destination; nil: only the refusals say it.
	Warn func(text string)

	// clientWatchDelay replaces forward's default watch delay; tests
	// shorten it.
	clientWatchDelay time.Duration

	initOnce sync.Once
	env      *serve.Env      // what the handlers see of the server
	warned   sync.Map        // destinations Warn was told about
	ctx      context.Context // cancelled when the server closes for good
	cancel   context.CancelFunc

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*serve.Conn]struct{}
	active    sync.WaitGroup
}

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("proxy: server closed")

const (
	defaultMaxHead   = 64 << 10
	defaultFirstByte = 10 * time.Second
	defaultGrace     = time.Second
	idleTimeout      = 60 * time.Second // between requests on a kept-alive connection
)

func (s *Server) init() {
	s.initOnce.Do(func() {
		if s.Dialer == nil {
			s.Dialer = &dial.Dialer{}
		}
		if s.Mode == nil {
			s.Mode = refusal.SRTMode{}
		}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[*serve.Conn]struct{})
		s.env = &serve.Env{
			Asker: s.Asker, Dialer: s.Dialer, Mode: s.Mode, Rules: &s.Rules,
			Pool: pool.New(s.Dialer), Strip: s.Rules.StripSet(),
			Token: s.Token, ProxyOnly: s.ProxyOnly != nil, UnauthenticatedSSHReason: s.UnauthenticatedSSHReason,
			MaxHead: s.maxHead(), FirstByteTimeout: s.firstByteTimeout(), WatchDelay: s.clientWatchDelay,
			Ctx: s.ctx, Closing: s.isClosing, Log: s.log, TunnelOpened: s.tunnelOpened, Warn: s.warnOnce,
		}
	})
}

func (s *Server) maxHead() int {
	if s.MaxHeadBytes > 0 {
		return s.MaxHeadBytes
	}
	return defaultMaxHead
}

func (s *Server) firstByteTimeout() time.Duration {
	if s.FirstByteTimeout > 0 {
		return s.FirstByteTimeout
	}
	return defaultFirstByte
}

// Serve accepts connections on l until l fails or the server shuts down
// (then it returns ErrServerClosed). Serve may run on several listeners at
// once.
func (s *Server) Serve(l net.Listener) error {
	s.init()
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors and the like: wait and try again, as net/http does.
			if s.Observer != nil {
				s.Observer.AcceptFailed()
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		cc := &serve.Conn{Raw: c}
		if !s.track(cc) {
			c.Close()
			return ErrServerClosed
		}
		go s.serveConn(cc)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// track registers a connection; false once the server is closing.
func (s *Server) track(c *serve.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	s.active.Add(1)
	return true
}

func (s *Server) untrack(c *serve.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Done()
}

// Shutdown stops accepting, closes idle connections, lets the others run
// for the grace period, then closes everything and waits for the
// connection handlers to return.
func (s *Server) Shutdown() {
	s.init()
	grace := s.Grace
	if grace <= 0 {
		grace = defaultGrace
	}
	s.stopAccepting()
	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
	s.Close()
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() {
	s.init()
	s.stopAccepting()
	s.cancel()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.active.Wait()
	s.env.Pool.Close()
}

func (s *Server) stopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		if c.Idle.Load() {
			c.Close()
		}
	}
}

// serveConn sniffs the first byte and hands the connection to SOCKS or
// HTTP.
func (s *Server) serveConn(c *serve.Conn) {
	defer s.untrack(c)
	defer c.Close()
	if s.Observer != nil {
		s.Observer.ConnOpened()
		defer s.Observer.ConnClosed()
	}
	br := bufio.NewReaderSize(c.Raw, 4096)
	c.Raw.SetReadDeadline(time.Now().Add(s.firstByteTimeout()))
	first, err := br.Peek(1)
	if err != nil {
		return // closed or silent: nothing was asked, nothing to record
	}
	switch first[0] {
	case 0x05:
		socks5.Serve(s.env, c, br)
	case 0x04:
		socks5.RefuseSOCKS4(s.env, c)
	default:
		s.serveHTTP(c, br)
	}
}
