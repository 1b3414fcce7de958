package proxy

import (
	"context"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
)

// pooledUpstream is where the plain-HTTP requests of one client
// connection get their upstream connections: from the server's pool. The
// one in use is closed with the client connection (and at shutdown).
type pooledUpstream struct{ h *httpConn }

func (pu pooledUpstream) get(ctx context.Context, ex *exchange, fresh bool) (*pool.Conn, error) {
	u, err := pu.h.s.pool.Get(ctx, pool.Key{Scheme: ex.scheme, Host: ex.req.Host, Port: ex.req.Port}, fresh)
	if err != nil {
		return nil, err
	}
	if !pu.h.c.SetUpstream(u.Net) {
		u.Close()
		return nil, pool.ErrServerClosing
	}
	return u, nil
}

func (pu pooledUpstream) done(u *pool.Conn, reusable bool) {
	if pu.h.c.SetUpstream(nil) && reusable {
		pu.h.s.pool.Put(u)
		return
	}
	u.Close()
}
