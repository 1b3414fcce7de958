// Package socks5 is srt-proxy's SOCKS5 front end (RFC 1928, RFC 1929):
// method negotiation, username/password authentication against the
// proxy credential, the CONNECT request (a destination canonicalised
// before anyone is asked), the decider, the dial and the tunnel; the
// in-band SSH refusal of a client that offered no credentials; and the
// refusal of SOCKS4. Only CONNECT is served, and in proxy-only mode
// nothing (a SOCKS tunnel cannot be inspected).
package socks5

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/netip"
	"time"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// SOCKS5 protocol constants (RFC 1928, RFC 1929).
const (
	socksVersion      = 0x05
	socksNoAuth       = 0x00
	socksUserPass     = 0x02
	socksNoAcceptable = 0xff
	socksCmdConnect   = 0x01
	socksAtypIPv4     = 0x01
	socksAtypDomain   = 0x03
	socksAtypIPv6     = 0x04
	userPassVersion   = 0x01
)

// socksReply is a SOCKS5 reply with the given code and bind address
// 0.0.0.0:0 (the proxy does not tell the sandbox its own addresses).
func socksReply(code byte) []byte {
	return []byte{socksVersion, code, 0x00, socksAtypIPv4, 0, 0, 0, 0, 0, 0}
}

// socks4Rejected is the SOCKS4 answer "request rejected or failed" (0x5b).
var socks4Rejected = []byte{0x00, 0x5b, 0, 0, 0, 0, 0, 0}

var (
	// errSOCKSProtocol is a SOCKS5 client that broke the protocol; the
	// connection is closed without a reply.
	errSOCKSProtocol = errors.New("SOCKS5 protocol violation")
	// errSOCKSNoMethod: the client offered no method the proxy accepts.
	errSOCKSNoMethod = errors.New("no acceptable SOCKS5 authentication method")
	// errSOCKSAuth: wrong username/password.
	errSOCKSAuth = errors.New("proxy authentication failed")
)

// socksError is a request answered with a SOCKS5 reply code and closed.
type socksError struct {
	code byte
	why  string
}

func (e *socksError) Error() string { return e.why }

// Serve serves one SOCKS5 connection whose first byte br has peeked:
// method negotiation, RFC 1929 authentication, the CONNECT request, the
// decider, the dial, the tunnel. It writes the connection's record.
func Serve(env *serve.Env, c *serve.Conn, br *bufio.Reader) { server{env}.serve(c, br) }

// server is the proxy as the SOCKS5 handler sees it.
type server struct{ *serve.Env }

func (s server) serve(c *serve.Conn, br *bufio.Reader) {
	rec := serve.NewRecord(ask.KindSOCKS.String())
	defer s.Log(rec)
	c.Raw.SetDeadline(time.Now().Add(s.FirstByteTimeout))
	user, authenticated, err := s.socksAuth(c, br)
	if err != nil {
		rec.Set(serve.Fail, err.Error())
		switch {
		case errors.Is(err, errSOCKSNoMethod) || errors.Is(err, errSOCKSAuth):
			rec.Decision, rec.Code = serve.Deny, refusal.CodeProxyAuth
		case errors.Is(err, errSOCKSProtocol):
			rec.Code = refusal.CodeBadRequest
		}
		serve.LingerClose(c.Raw)
		return
	}
	rec.User = user
	host, port, err := readSOCKSRequest(br)
	rec.Host, rec.Port = host, port
	if err != nil {
		rec.Set(serve.Fail, err.Error())
		var se *socksError
		if errors.As(err, &se) {
			rec.Code = refusal.CodeBadRequest
			c.Raw.Write(socksReply(se.code))
		}
		serve.LingerClose(c.Raw)
		return
	}
	if !authenticated {
		s.refuseUnauthenticated(c, host, port, rec)
		return
	}
	c.Raw.SetDeadline(time.Time{})
	if s.ProxyOnly {
		s.refuseProxyOnly(c, host, port, rec)
		return
	}

	req := &ask.Request{Kind: ask.KindSOCKS, User: user, Method: "CONNECT", Host: host, Port: port, Path: "*"}
	ctx, cancel := context.WithCancel(s.Ctx)
	defer cancel()
	refuse := func(r refusal.Refusal, decision string) {
		r.Kind, r.Host = ask.KindSOCKS, host
		rec.Set(decision, r.Reason)
		rec.Code = r.Code()
		c.Raw.Write(socksReply(s.Mode.Render(r).SOCKS))
		serve.LingerClose(c.Raw)
	}
	v, err := s.Asker.Ask(ctx, req)
	if err != nil {
		refuse(refusal.Refusal{Cause: refusal.CauseUnavailable, Reason: refusal.DeciderReason(err.Error())}, serve.Fail)
		return
	}
	if !v.Allow {
		refuse(refusal.Refusal{Cause: refusal.CauseDenied, Status: v.Status, Reason: v.Reason}, serve.Deny)
		return
	}
	if s.Rules.RefuseOpaqueTunnels { // a SOCKS tunnel cannot be inspected
		s.Asker.Refused(req, refusal.WhySOCKSTunnel)
		refuse(refusal.Refusal{Cause: refusal.CauseOpaqueTunnel, Reason: refusal.WhySOCKSTunnel}, serve.Deny)
		return
	}
	up, dialed, err := s.Dialer.Tunnel(ctx, host, port)
	rec.Addr = dialed.Addr
	if err != nil {
		var refused *dial.AddressRefusedError
		if errors.As(err, &refused) {
			s.Asker.Refused(req, refused.Reason)
			refuse(refusal.Refusal{Cause: refusal.CauseAddress, Reason: refused.Reason}, serve.Deny)
			return
		}
		why := pool.UnreachableReason(err)
		s.Asker.Refused(req, why)
		f, _ := pool.Describe(err, host, port, "")
		refuse(refusal.Refusal{Cause: refusal.CauseUnreachable, Reason: why, Failure: f}, serve.Fail)
		return
	}
	if _, err := c.Raw.Write(socksReply(refusal.SOCKSSucceeded)); err != nil {
		up.Close()
		rec.Set(serve.Fail, "writing the SOCKS5 reply: "+err.Error())
		return
	}
	rec.Set(serve.Allow, v.Reason)
	s.RunTunnel(c, serve.TakeBuffered(br), up, rec)
}

// socksAuth negotiates the method and, for username/password, checks the
// credentials. authenticated is false only for a client that offered no
// username/password method while a token is required: it gets the no-auth
// method so that its request can be read (and refused).
func (s server) socksAuth(c *serve.Conn, br *bufio.Reader) (user string, authenticated bool, err error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", false, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", false, err
	}
	method := byte(socksNoAcceptable)
	for _, m := range methods {
		if m == socksUserPass {
			method = socksUserPass
			break
		}
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Raw.Write([]byte{socksVersion, method}); err != nil {
		return "", false, err
	}
	switch method {
	case socksNoAcceptable:
		return "", false, errSOCKSNoMethod
	case socksNoAuth:
		return "", s.Token == "", nil
	}
	user, pass, err := readUserPass(br)
	if err != nil {
		return "", false, err
	}
	if s.Token != "" && (user == "" || !serve.TokenEqual(pass, s.Token)) {
		c.Raw.Write([]byte{userPassVersion, 0x01})
		return user, false, errSOCKSAuth
	}
	if _, err := c.Raw.Write([]byte{userPassVersion, 0x00}); err != nil {
		return "", false, err
	}
	return user, true, nil
}

// readUserPass reads an RFC 1929 username/password request.
func readUserPass(br *bufio.Reader) (user, pass string, err error) {
	ver, err := br.ReadByte()
	if err != nil {
		return "", "", err
	}
	if ver != userPassVersion {
		return "", "", errSOCKSProtocol
	}
	u, err := readLenPrefixed(br)
	if err != nil {
		return "", "", err
	}
	p, err := readLenPrefixed(br)
	if err != nil {
		return "", "", err
	}
	return string(u), string(p), nil
}

// readLenPrefixed reads one length byte and that many bytes.
func readLenPrefixed(br *bufio.Reader) ([]byte, error) {
	n, err := br.ReadByte()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(br, b)
	return b, err
}

// readSOCKSRequest reads a SOCKS5 request and returns its CONNECT
// destination, canonical. Another command, an unknown address type and a
// destination that is not a valid host or port are *socksError (with the
// reply code to send); a malformed request is errSOCKSProtocol.
func readSOCKSRequest(br *bufio.Reader) (string, int, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", 0, err
	}
	if hdr[0] != socksVersion || hdr[2] != 0 {
		return "", 0, errSOCKSProtocol
	}
	var host string
	switch hdr[3] {
	case socksAtypIPv4:
		var a [4]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return "", 0, err
		}
		host = netip.AddrFrom4(a).String()
	case socksAtypIPv6:
		var a [16]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return "", 0, err
		}
		host = netip.AddrFrom16(a).Unmap().String()
	case socksAtypDomain:
		name, err := readLenPrefixed(br)
		if err != nil {
			return "", 0, err
		}
		host = string(name)
	default:
		return "", 0, &socksError{refusal.SOCKSAddrUnsupported, "SOCKS5 address type not supported"}
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return "", 0, err
	}
	port := int(pb[0])<<8 | int(pb[1])
	if hdr[1] != socksCmdConnect {
		return "", port, &socksError{refusal.SOCKSCmdUnsupported, "SOCKS5 command not supported"}
	}
	canon, err := hostname.Canonical(host)
	if err != nil {
		return "", port, &socksError{refusal.SOCKSNotAllowed, hostname.ReasonMalformed}
	}
	if port == 0 {
		return canon, port, &socksError{refusal.SOCKSNotAllowed, "port 0"}
	}
	return canon, port, nil
}

// refuseUnauthenticated answers a client that offered no username/password
// method: never dialled, never asked about. SSH (port 22) gets the
// refusal in-band; everything else reply 0x02.
func (s server) refuseUnauthenticated(c *serve.Conn, host string, port int, rec *serve.Record) {
	rec.Set(serve.Deny, refusal.CauseAuth.Name())
	rec.Code = refusal.CodeProxyAuth
	if port != 22 {
		c.Raw.Write(socksReply(refusal.SOCKSNotAllowed))
		serve.LingerClose(c.Raw)
		return
	}
	text := defaultSSHRefusal
	if s.UnauthenticatedSSHReason != nil {
		if r := s.UnauthenticatedSSHReason(host, port); r != "" {
			text = r
		}
	}
	msg := append(socksReply(refusal.SOCKSSucceeded), sshIdentification...)
	c.Raw.Write(append(msg, sshDisconnect(text)...))
	serve.LingerClose(c.Raw)
}

// RefuseSOCKS4 answers a SOCKS4 client (its first byte 0x04): this proxy
// speaks SOCKS5 only. It writes the connection's record.
func RefuseSOCKS4(env *serve.Env, c *serve.Conn) { server{env}.refuseSOCKS4(c) }

func (s server) refuseSOCKS4(c *serve.Conn) {
	rec := serve.NewRecord("socks4")
	rec.Set(serve.Deny, "SOCKS4 is not supported")
	rec.Code = refusal.CodeSOCKS4
	c.Raw.SetWriteDeadline(time.Now().Add(s.FirstByteTimeout))
	c.Raw.Write(socks4Rejected)
	s.Log(rec)
	serve.LingerClose(c.Raw)
}

// refuseProxyOnly answers a SOCKS5 CONNECT in proxy-only mode: reply
// 0x02, since a SOCKS tunnel cannot be inspected.
func (s server) refuseProxyOnly(c *serve.Conn, host string, port int, rec *serve.Record) {
	rec.Host, rec.Port = host, port
	rec.Set(serve.Deny, refusal.WhyOpaqueTunnel)
	rec.Code = refusal.CodeOpaqueTunnel
	c.Raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.Raw.Write(socksReply(s.Mode.Render(refusal.Refusal{Cause: refusal.CauseOpaqueTunnel, Kind: ask.KindSOCKS, Host: host}).SOCKS))
	serve.LingerClose(c.Raw)
}
