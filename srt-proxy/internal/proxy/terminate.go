package proxy

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
// Set it on Server.TLS before the first Serve and do not change or copy it
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
	// are the Server's Rules.

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

// acquire takes a tunnel slot; false when all are taken.
func (t *Terminate) acquire() bool {
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

// firstRefusal reports whether user has not been told about a refusal for
// too many tunnels since the slots were last half free (the reference
// records that violation once per command).
func (t *Terminate) firstRefusal(user string) bool {
	_, told := t.saturated.LoadOrStore(user, true)
	return !told
}

// excluded reports whether host is tunnelled without termination.
func (t *Terminate) excluded(host string) bool {
	return t.Exclude != nil && t.Exclude(host)
}
