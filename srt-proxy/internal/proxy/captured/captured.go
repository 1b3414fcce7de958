// Package captured serves the connections a sandbox made to addresses
// outside it, which its network namespace's NAT rules redirected to a
// capture listener (internal/capture finds where each was going): each is
// decided as a CONNECT to its destination would be, and refused with a
// reset.
package captured

import (
	"bufio"
	"context"
	"net"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// Destination is a connection the sandbox made to an address outside it,
// which its network namespace's NAT rules redirected to a capture
// listener (internal/capture says where it was going). It is decided as a
// CONNECT to Host:Port would be: the same question to the Asker, the same
// dial, the same tunnel or TLS termination; a refusal resets it.
type Destination struct {
	// User is the sandbox's attribution user ("srt.<label>").
	User string
	// Host is the destination, canonical: the name a fake address stands
	// for, the host a loopback destination's allowedDomains entry names,
	// or the IP address the connection went to.
	Host string
	Port int
	// Literal says Host is the IP address the connection went to: with TLS
	// termination, the server name of the client's ClientHello names the
	// destination instead, when it gives one.
	Literal bool
	// Refuse, when set, refuses the connection with this reason and asks
	// nobody (a fake address that stands for no name).
	Refuse string
}

// recordCapture is the kind of a captured connection's record.
const recordCapture = "capture"

// whyCaptureProxyOnly refuses a captured connection in proxy-only mode,
// which has no sandbox to capture from (srt hands capture listeners over
// in its own mode only).
const whyCaptureProxyOnly = "captured connections are served in srt's mode only"

// Serve serves one captured connection c, tracked by the proxy, until it
// ends (t terminates TLS; nil: none), and writes its record. c is closed
// when it returns; every outcome but an allowed tunnel or session resets
// it (RST), so that the program sees the refusal at once.
//
//	accepted ─▶ Refuse? reset
//	   └─ Literal and TLS termination? peek the ClientHello: its server name is the Host
//	        └─ Ask(CONNECT Host:Port, User) ── deny / error ─▶ reset
//	             └─ terminate (as an allowed CONNECT), or dial + tunnel (splice)
func Serve(env *serve.Env, t *terminate.Terminate, cc *serve.Conn, d Destination) {
	c := cc.Raw
	rec := serve.NewRecord(recordCapture)
	rec.User, rec.Host, rec.Port = d.User, d.Host, d.Port
	defer func() {
		if rec.Decision != serve.Allow {
			resetOnClose(c)
		}
		cc.Close()
		env.Log(rec)
	}()
	switch {
	case d.Refuse != "":
		rec.Set(serve.Deny, d.Refuse)
		rec.Code = refusal.CodeHostNotAllowed
		return
	case env.ProxyOnly:
		rec.Set(serve.Deny, whyCaptureProxyOnly)
		return
	}
	var br *bufio.Reader
	if d.Literal && t != nil && !t.Excluded(d.Host) {
		// Up to one whole TLS record: a ClientHello is in the first.
		br = bufio.NewReaderSize(c, 5+1<<14)
		c.SetReadDeadline(time.Now().Add(t.HandshakeLimit()))
		if name := helloServerName(br); name != "" {
			d.Host, rec.Host = name, name
		}
		c.SetReadDeadline(time.Time{})
	}
	req := &ask.Request{Kind: ask.KindConnect, User: d.User, Method: "CONNECT", Host: d.Host, Port: d.Port, Path: "*"}
	ctx, cancel := context.WithCancel(env.Ctx)
	defer cancel()
	v, err := env.Asker.Ask(ctx, req)
	if err != nil {
		rec.Set(serve.Fail, refusal.DeciderReason(err.Error()))
		rec.Code = refusal.CodeDeciderUnavailable
		return
	}
	if !v.Allow {
		reason := v.Reason
		if reason == "" {
			reason = refusal.CauseDenied.Name()
		}
		rec.Set(serve.Deny, reason)
		rec.Code = refusal.CodeDecider
		return
	}
	rec.Set(serve.Allow, v.Reason)
	if t == nil || t.Excluded(req.Host) {
		captureOpaque(env, cc, br, req, rec) // br is nil unless it peeked
		return
	}
	if br == nil {
		br = bufio.NewReaderSize(c, 4096)
	}
	if !t.Acquire() {
		if t.FirstRefusal(req.User) {
			env.Asker.Refused(req, refusal.WhyTooManyTunnels)
		}
		rec.Set(serve.Deny, refusal.WhyTooManyTunnels)
		rec.Code = refusal.CodeTooManyTunnels
		return
	}
	terminate.Tunnel(env, t, cc, br, req, rec)
}

// captureOpaque tunnels an allowed captured connection that is not
// terminated: refused under Rules.RefuseOpaqueTunnels (the decider is
// told), dialled and spliced otherwise.
func captureOpaque(env *serve.Env, c *serve.Conn, br *bufio.Reader, req *ask.Request, rec *serve.Record) {
	if env.Rules.RefuseOpaqueTunnels {
		env.Asker.Refused(req, refusal.WhyOpaqueTunnel)
		rec.Set(serve.Deny, refusal.WhyOpaqueTunnel)
		rec.Code = refusal.CodeOpaqueTunnel
		return
	}
	terminate.OpaqueAfterAnswer(env, c, req, br, rec)
}

// resetOnClose makes closing c send a reset (RST) rather than an orderly
// end: SO_LINGER with a zero timeout.
func resetOnClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}
