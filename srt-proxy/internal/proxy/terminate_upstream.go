package proxy

import (
	"context"
	"net"
)

// upstream returns the tunnel's upstream connection: the kept one if it
// is still open (and fresh is not asked for), else a new one
// (dial.Dialer.TLS: the resolved-address check, the parent proxy,
// certificate verification against the Terminate's roots). The dial is
// bounded by the handshake timeout.
func (x *tlsSession) upstream(ctx context.Context, fresh bool) (*upConn, error) {
	if x.upc != nil {
		if !fresh && x.upc.alive() {
			return x.upc, nil
		}
		x.dropUpstream()
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(x.t.HandshakeTimeout, defaultHandshakeTimeout))
	defer cancel()
	var bulk *bulkConn
	wrap := func(c net.Conn) net.Conn { bulk = &bulkConn{Conn: c}; return bulk }
	tc, dialed, err := x.s.Dialer.TLS(ctx, x.connect.Host, x.connect.Port, x.t.upstream, wrap)
	x.addr = dialed.Addr
	if err != nil {
		return nil, err
	}
	if !x.outer.setUpstream(tc) { // closed with the client, and at shutdown
		tc.Close()
		return nil, errServerClosing
	}
	x.upc = newUpConn(tc, bulk.Conn, dialed.Addr)
	x.upc.bulk = bulk
	return x.upc, nil
}

// dropUpstream closes the upstream connection.
func (x *tlsSession) dropUpstream() {
	if x.upc != nil {
		x.upc.close()
		x.upc = nil
	}
}

// tunnelUpstream is where the requests of a terminated tunnel get their
// upstream connection: the tunnel's own, kept alive between them.
type tunnelUpstream struct{ x *tlsSession }

func (t tunnelUpstream) get(ctx context.Context, _ *exchange, fresh bool) (*upConn, error) {
	return t.x.upstream(ctx, fresh)
}

func (t tunnelUpstream) done(u *upConn, reusable bool) {
	if reusable {
		return
	}
	u.close()
	if t.x.upc == u {
		t.x.upc = nil
	}
}
