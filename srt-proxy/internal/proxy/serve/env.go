package serve

import (
	"context"
	"net"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// Env is the proxy as its connection handlers see it: its dependencies
// and settings, and the calls back into it. proxy.Server builds one when
// it starts and hands it to every handler; a handler reads it and never
// changes it.
type Env struct {
	Asker  ask.Asker       // the decider
	Dialer *dial.Dialer    // opens every outbound connection
	Mode   refusal.Mode    // renders refusals
	Rules  *rules.Rules    // the request options
	Pool   *pool.Pool      // the plain-HTTP upstream connections kept alive
	Strip  map[string]bool // Rules.StripResponseHeaders, folded (http1.FoldName)
	// Token is the proxy credential of srt's mode (HTTP Basic, SOCKS5
	// RFC 1929); "": no authentication.
	Token string
	// ProxyOnly is proxy-only mode: SOCKS5 tunnels and captured
	// connections are refused.
	ProxyOnly bool
	// UnauthenticatedSSHReason is proxy.Server's: the text of the in-band
	// SSH refusal of a SOCKS5 client that offered no credentials; nil or
	// "": the default.
	UnauthenticatedSSHReason func(host string, port int) string
	MaxHead                  int           // bounds a request head
	FirstByteTimeout         time.Duration // bounds a new connection's first byte and a SOCKS5 handshake
	WatchDelay               time.Duration // before an exchange watches its client; 0: the default

	Ctx     context.Context // cancelled when the proxy closes for good
	Closing func() bool     // reports whether the proxy is shutting down
	// Log writes a record, once (later calls do nothing), and tells the
	// Observer.
	Log func(*Record)
	// TunnelOpened tells the Observer a tunnel of kind opened; the func it
	// returns tells it the tunnel closed.
	TunnelOpened func(kind string) (closed func())
	// Warn tells the user, once per destination, about an upstream failure
	// that only they can fix (a certificate nothing trusts).
	Warn func(f refusal.UpstreamFailure, host string, port int, text string)
}

// Tunnel kinds, as Env.TunnelOpened tells them (proxy.Observer).
const (
	TunnelConnect    = "connect"    // an HTTP CONNECT relayed as it is
	TunnelSOCKS      = "socks"      // a SOCKS5 CONNECT
	TunnelTerminated = "terminated" // a TLS-terminated CONNECT
)

// RunTunnel relays between the client c and up until both are done,
// first sending up what the client sent early. The bytes are counted
// into rec.
func (e *Env) RunTunnel(c *Conn, early []byte, up net.Conn, rec *Record) {
	if !c.SetUpstream(up) {
		up.Close()
		rec.Set(Fail, "server closing")
		return
	}
	defer e.TunnelOpened(rec.Kind)()
	if len(early) > 0 {
		n, err := up.Write(early)
		rec.Up += int64(n)
		if err != nil {
			rec.Set(Fail, "writing to the upstream: "+err.Error())
			return
		}
	}
	n, m := Tunnel(c.Raw, up)
	rec.Up += n
	rec.Down += m
}
