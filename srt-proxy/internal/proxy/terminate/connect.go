package terminate

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// ServeConnect takes over an allowed CONNECT when TLS termination
// applies to it, or when Rules.RefuseOpaqueTunnels refuses it, and reports
// false when neither does (no Terminate, or an excluded host, and opaque
// tunnels allowed): the caller then dials and tunnels as before. It writes
// the CONNECT's record.
//
//	CONNECT allowed ─▶ no Terminate, or excluded? ── yes ─▶ refuseOpaqueTunnels? 403 : (caller's opaque tunnel)
//	        │
//	        └─ slot free? ── no ─▶ 503 too-many-tunnels
//	             └─ 200 ─▶ first bytes ─▶ ClientHello ─▶ handshake (HandshakeTimeout) ─▶ session
//	                            └── not TLS ─▶ refuseOpaqueTunnels? destroy : dial + opaque tunnel
func ServeConnect(t *Terminate, h *forward.Conn, req *ask.Request, v ask.Verdict, rec *serve.Record) bool {
	env := h.Env
	if t == nil || t.Excluded(req.Host) {
		if !env.Rules.RefuseOpaqueTunnels {
			return false
		}
		env.Asker.Refused(req, refusal.WhyOpaqueTunnel)
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseOpaqueTunnel, Kind: ask.KindConnect, Reason: refusal.WhyOpaqueTunnel, Host: req.Host}, true)
		return true
	}
	if !t.Acquire() {
		if t.FirstRefusal(req.User) {
			env.Asker.Refused(req, refusal.WhyTooManyTunnels)
		}
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseTooManyTunnels, Kind: ask.KindConnect, Reason: refusal.WhyTooManyTunnels, Host: req.Host}, true)
		return true
	}
	defer env.Log(rec)
	raw, br := h.Client.Raw, h.BR
	raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	h.BW.WriteString(http1.ConnectEstablished)
	err := h.BW.Flush()
	h.BR, h.BW = nil, nil // the connection is the session's now
	if err != nil {
		t.release()
		rec.Set(serve.Fail, "writing the CONNECT answer: "+err.Error())
		return true
	}
	rec.Set(serve.Allow, v.Reason)
	Tunnel(env, t, h.Client, br, req, rec)
	return true
}

// Tunnel serves an allowed tunnel whose client may speak TLS
// next (an answered CONNECT, a captured connection), holding a slot of
// t, which it releases: the ClientHello within HandshakeTimeout, the
// handshake, the session. A tunnel that turns out not to be TLS is
// refused under Rules.RefuseOpaqueTunnels (the decider is told; the
// caller closes) and dialled and tunnelled opaquely otherwise. It sets
// rec's outcome.
func Tunnel(env *serve.Env, t *Terminate, c *serve.Conn, br *bufio.Reader, req *ask.Request, rec *serve.Record) {
	held := true
	defer func() {
		if held {
			t.release()
		}
	}()
	raw := c.Raw
	deadline := time.Now().Add(orDefault(t.HandshakeTimeout, defaultHandshakeTimeout))
	raw.SetDeadline(deadline)
	switch Sniff(br) {
	case mitm.NeedMore:
		rec.Set(serve.Fail, "no TLS ClientHello before the handshake deadline")
		return
	case mitm.NotTLS:
		t.release()
		held = false
		if env.Rules.RefuseOpaqueTunnels {
			rec.Set(serve.Deny, refusal.WhyNotTLS)
			rec.Code = refusal.CodeOpaqueTunnel
			env.Asker.Refused(req, refusal.WhyNotTLS)
			return // the caller closes: the tunnel is destroyed
		}
		raw.SetDeadline(time.Time{})
		OpaqueAfterAnswer(env, c, req, br, rec)
		return
	}
	helloAt := time.Now()
	bulk := &bulk.Conn{Conn: raw}
	tc := tls.Server(&peekedConn{Conn: bulk, r: br}, t.serverConfig(req.Host, env.Rules.RequireHostMatch))
	ctx, cancel := context.WithCancel(env.Ctx)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		rec.Set(serve.Fail, "TLS handshake with the client: "+err.Error())
		return
	}
	raw.SetDeadline(time.Time{})
	x := newTLSSession(env, t, c, tc, bulk, req)
	closed := env.TunnelOpened(serve.TunnelTerminated)
	x.serve(helloAt)
	closed()
	rec.Up, rec.Down, rec.Addr = x.up, x.down, x.addr
}

// Sniff reads the tunnel's first bytes until they show whether a TLS
// ClientHello starts it. It returns NeedMore when the client sent nothing
// telling before the read deadline (or closed without sending a byte); a
// client that closes after a prefix of a ClientHello has sent no TLS.
func Sniff(br *bufio.Reader) mitm.Sniffed {
	for n := 1; n <= mitm.SniffLen; n++ {
		b, err := br.Peek(n)
		if s := mitm.Sniff(b); s != mitm.NeedMore {
			return s
		}
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return mitm.NotTLS
			}
			return mitm.NeedMore
		}
	}
	return mitm.NeedMore // not reached: SniffLen bytes always decide
}

// OpaqueAfterAnswer dials the target of a tunnel that turned out not to
// be TLS, after it was answered (a CONNECT's 200, a captured connection's
// accept): a failure can only close the connection (and is told to the
// decider).
func OpaqueAfterAnswer(env *serve.Env, c *serve.Conn, req *ask.Request, br *bufio.Reader, rec *serve.Record) {
	ctx, cancel := context.WithCancel(env.Ctx)
	up, dialed, err := env.Dialer.Tunnel(ctx, req.Host, req.Port)
	cancel()
	rec.Addr = dialed.Addr
	if err != nil {
		// As after a CONNECT's allow: the address check is policy (deny),
		// an upstream that cannot be reached a failure.
		var refused *dial.AddressRefusedError
		if errors.As(err, &refused) {
			env.Asker.Refused(req, refused.Reason)
			rec.Set(serve.Deny, refused.Reason)
			rec.Code = refusal.CodeAddressNotAllowed
			return
		}
		why := pool.UnreachableReason(err)
		env.Asker.Refused(req, why)
		rec.Set(serve.Fail, why)
		f, _ := pool.Describe(err, req.Host, req.Port, "")
		rec.Code = f.Code()
		return
	}
	env.RunTunnel(c, serve.TakeBuffered(br), up, rec)
}

// serverConfig is the TLS server side of one tunnel to target: the
// certificate is minted for the client's server name (lower-cased), or
// for target when there is none, it is not a host name, or hostMatch
// (Rules.RequireHostMatch) is set. Only HTTP/1.1 is offered (see
// docs/tls-termination.md).
func (t *Terminate) serverConfig(target string, hostMatch bool) *tls.Config {
	return &tls.Config{
		MinVersion:             tls.VersionTLS12,
		NextProtos:             []string{"http/1.1"},
		SessionTicketsDisabled: true, // every tunnel is a full handshake; no ticket keys to keep
		// The client is the sandbox on this host (or, for srt proxy, a
		// workload on the loopback or a local link): a post-quantum key
		// exchange protects little there and costs about a third of the
		// handshake. The upstream leg, which crosses networks, keeps
		// Go's default, X25519MLKEM768 first.
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384},
		GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return t.CA.Leaf(certName(target, hi.ServerName, hostMatch))
		},
	}
}

func certName(target, sni string, hostMatch bool) string {
	if hostMatch || sni == "" {
		return target
	}
	if c, err := hostname.Canonical(sni); err == nil {
		return c
	}
	return target
}

// peekedConn reads what the sniffing buffered before reading the
// connection itself; once the buffer is drained it lets it go.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(p)
		}
		c.r = nil
	}
	return c.Conn.Read(p)
}
