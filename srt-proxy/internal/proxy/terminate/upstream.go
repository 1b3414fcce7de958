package terminate

import (
	"context"
	"net"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
)

// upstream returns the tunnel's upstream connection: the kept one if it
// is still open (and fresh is not asked for), else a new one
// (dial.Dialer.TLS: the resolved-address check, the parent proxy,
// certificate verification against the Terminate's roots). The dial is
// bounded by the handshake timeout.
func (x *tlsSession) upstream(ctx context.Context, fresh bool) (*pool.Conn, error) {
	if x.upc != nil {
		if !fresh && x.upc.Alive() {
			return x.upc, nil
		}
		x.dropUpstream()
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(x.t.HandshakeTimeout, defaultHandshakeTimeout))
	defer cancel()
	var bc *bulk.Conn
	wrap := func(c net.Conn) net.Conn { bc = &bulk.Conn{Conn: c}; return bc }
	tc, dialed, err := x.env.Dialer.TLS(ctx, x.connect.Host, x.connect.Port, x.t.upstream, wrap)
	x.addr = dialed.Addr
	if err != nil {
		return nil, err
	}
	if !x.outer.SetUpstream(tc) { // closed with the client, and at shutdown
		tc.Close()
		return nil, pool.ErrServerClosing
	}
	x.upc = pool.NewConn(tc, bc.Conn, dialed.Addr)
	x.upc.Bulk = bc
	return x.upc, nil
}

// dropUpstream closes the upstream connection.
func (x *tlsSession) dropUpstream() {
	if x.upc != nil {
		x.upc.Close()
		x.upc = nil
	}
}

// tunnelUpstream is where the requests of a terminated tunnel get their
// upstream connection: the tunnel's own, kept alive between them.
type tunnelUpstream struct{ x *tlsSession }

func (t tunnelUpstream) Get(ctx context.Context, _ *forward.Exchange, fresh bool) (*pool.Conn, error) {
	return t.x.upstream(ctx, fresh)
}

func (t tunnelUpstream) Done(u *pool.Conn, reusable bool) {
	if reusable {
		return
	}
	u.Close()
	if t.x.upc == u {
		t.x.upc = nil
	}
}
