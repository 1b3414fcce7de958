package dial

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"time"
)

// httpsHandshakeTimeout bounds the TLS handshake of an https:// upstream
// of a plain-HTTP request.
const httpsHandshakeTimeout = 10 * time.Second

// HTTP opens an upstream connection for the absolute-form requests the
// proxy forwards to scheme://host:port (scheme "http" or "https", host
// canonical). The connection may carry several requests, one after
// another, all to that destination.
//
// An http:// destination the MITM proxy takes goes to it: Dialed.Parent
// is then its "unix:" URL, and requests go to it in absolute form, without
// credentials. Any other http:// destination goes to the parent's http URL unless NO_PROXY
// exempts it: Dialed.Parent is then set, and requests go to it in absolute
// form with ProxyAuthorization(Dialed.Parent). Otherwise it is dialled
// with Direct, so the resolved-address check applies to every new
// connection. An https:// destination is reached as TLS reaches a
// tunnel's upstream (the parent's CONNECT when one applies), verified
// against this host's roots; requests go to it in origin form.
//
// wrap, when not nil, wraps the byte stream under TLS (https only). Errors
// are the Dialer's typed ones.
func (d *Dialer) HTTP(ctx context.Context, scheme, host string, port int, wrap func(net.Conn) net.Conn) (net.Conn, Dialed, error) {
	if scheme == "https" {
		ctx, cancel := context.WithTimeout(ctx, httpsHandshakeTimeout)
		defer cancel()
		return d.TLS(ctx, host, port, &tls.Config{}, wrap)
	}
	if err := checkTarget(host, port); err != nil {
		return nil, Dialed{}, err
	}
	if d.MITM.takes(host) {
		c, err := d.dialMITM(ctx, host, port)
		if err != nil {
			return nil, Dialed{}, err
		}
		return c, Dialed{Addr: d.MITM.Socket, Parent: d.MITM.url()}, nil
	}
	u := d.Parent.For(host, false)
	if u == nil {
		return d.Direct(ctx, host, port)
	}
	c, err := d.dialParent(ctx, u)
	if err != nil {
		return nil, Dialed{}, &UnreachableError{Host: host, Port: port, Parent: u.Host, Err: fmt.Errorf("parent proxy %s: %w", u.Host, err)}
	}
	return c, Dialed{Addr: c.RemoteAddr().String(), Parent: u}, nil
}

// dialParent opens a connection to parent u: TCP, and TLS for an https://
// parent, its handshake bounded by the parent's handshake timeout.
func (d *Dialer) dialParent(ctx context.Context, u *url.URL) (net.Conn, error) {
	raw, err := d.dial(ctx, "tcp", parentAddr(u))
	if err != nil || u.Scheme != "https" {
		return raw, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.Parent.handshakeTimeout())
	defer cancel()
	tc := tls.Client(raw, d.Parent.tlsConfigFor(u))
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}
