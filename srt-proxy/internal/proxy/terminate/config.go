// Package terminate is TLS termination (network.tlsTerminate): an
// allowed CONNECT (or captured connection) is answered by the proxy,
// which shows the client a certificate its CA mints (Terminate), reads
// every HTTP request inside the tunnel, asks the decider about each one
// (with the TLS server name), refuses what the request options refuse
// (requireHostMatch, ambiguousRequestTarget, TRACE), and forwards what is
// allowed over one upstream TLS connection of its own that verifies the
// upstream's certificate. A tunnel that turns out not to be TLS is
// refused (refuseOpaqueTunnels) or tunnelled as it is.
//
//	CONNECT allowed ─▶ ServeConnect ─▶ 200 ─▶ Tunnel: Sniff ─▶ handshake ─▶ session
//	                                                   │            └─ per request: head ─▶ checks ─▶ Ask ─▶ forward.Forward
//	                                                   └─ not TLS ─▶ refuse, or OpaqueAfterAnswer
package terminate

import (
	"crypto/tls"
	"crypto/x509"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/mitm"
)

// Terminate configures TLS termination of allowed CONNECT tunnels
// (network.tlsTerminate, §5.1): the proxy answers the CONNECT itself,
// shows the client a certificate its CA mints for the name asked for,
// reads each HTTP request inside, asks the decider about it (Kind
// KindHTTP, with the TLS server name) and forwards it over a TLS
// connection of its own that verifies the upstream's certificate.
//
// Set it on proxy.Server.TLS before the first Serve and do not change or copy it
// afterwards (it holds the tunnel count). Nil fields and zero values have
// the reference's defaults.
type Terminate struct {
	CA *mitm.CA // mints the certificates the client sees; required
	// Roots verify the upstreams' certificates: this host's roots and the
	// settings' extraCaCertPaths (dial.UpstreamRoots); nil: the host's
	// roots only.
	Roots *x509.CertPool
	// TrustFix names where a user adds the CA of an upstream certificate
	// Roots do not trust, as the refusal of one says ("if you trust it,
	// add its CA certificate to <TrustFix>"): the settings'
	// network.tlsTerminate.extraCaCertPaths in srt's mode; "": this host's
	// trust store.
	TrustFix string
	// Exclude reports whether CONNECTs to a canonical host are tunnelled
	// without termination (excludeDomains); nil: none are.
	Exclude func(host string) bool
	// MaxTunnels caps the TLS-terminated tunnels open at once; 0: 256.
	MaxTunnels int
	// HandshakeTimeout bounds the time from the CONNECT's 200 to the end
	// of the client's TLS handshake; 0: 10 s.
	HandshakeTimeout time.Duration
	// The request options that apply inside the tunnels (requireHostMatch,
	// ambiguousRequestTarget, stripResponseHeaders, refuseOpaqueTunnels)
	// are proxy.Server's Rules.

	// FirstRequestTimeout closes a tunnel that sends no request this long
	// after its ClientHello (0: 10 s); IdleTimeout one that sends no next
	// request this long after a response (0: 6 s); StallTimeout a transfer
	// that moves no byte this long (0: 300 s).
	FirstRequestTimeout, IdleTimeout, StallTimeout time.Duration

	once      sync.Once
	inUse     atomic.Int64
	upstream  *tls.Config // the client side of every upstream leg
	saturated sync.Map    // users told about a refusal for too many tunnels, until half the slots free
}

const (
	defaultMaxTunnels       = 256
	defaultHandshakeTimeout = 10 * time.Second
	defaultFirstRequest     = 10 * time.Second
	defaultTLSIdle          = 6 * time.Second
	defaultStall            = 300 * time.Second
	// keepAliveAnswer is the Keep-Alive header of every kept-alive response
	// in a terminated tunnel: the client learns the proxy's idle limit.
	keepAliveAnswer = "timeout=5"
)

func (t *Terminate) init() {
	t.once.Do(func() {
		t.upstream = &tls.Config{
			RootCAs:            t.Roots,
			NextProtos:         []string{"http/1.1"},
			MinVersion:         tls.VersionTLS12,
			ClientSessionCache: tls.NewLRUClientSessionCache(512),
		}
	})
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (t *Terminate) maxTunnels() int64 {
	if t.MaxTunnels > 0 {
		return int64(t.MaxTunnels)
	}
	return defaultMaxTunnels
}

// Acquire takes a tunnel slot; false when all are taken.
func (t *Terminate) Acquire() bool {
	t.init()
	for {
		n := t.inUse.Load()
		if n >= t.maxTunnels() {
			return false
		}
		if t.inUse.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives a slot back; once half the slots are free, users are told
// again about their next refusal.
func (t *Terminate) release() {
	if t.inUse.Add(-1) <= t.maxTunnels()/2 {
		t.saturated.Clear()
	}
}

// FirstRefusal reports whether user has not been told about a refusal for
// too many tunnels since the slots were last half free (the reference
// records that violation once per command).
func (t *Terminate) FirstRefusal(user string) bool {
	_, told := t.saturated.LoadOrStore(user, true)
	return !told
}

// Excluded reports whether host is tunnelled without termination.
func (t *Terminate) Excluded(host string) bool {
	return t.Exclude != nil && t.Exclude(host)
}

// HandshakeLimit is HandshakeTimeout, or its default.
func (t *Terminate) HandshakeLimit() time.Duration {
	return orDefault(t.HandshakeTimeout, defaultHandshakeTimeout)
}

// InUse is how many tunnel slots are taken.
func (t *Terminate) InUse() int64 { return t.inUse.Load() }
