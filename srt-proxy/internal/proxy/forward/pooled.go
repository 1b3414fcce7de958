package forward

import (
	"context"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
)

// pooledUpstream is where the plain-HTTP requests of one client
// connection get their upstream connections: from the server's pool. The
// one in use is closed with the client connection (and at shutdown).
type pooledUpstream struct{ h *Conn }

// Pooled is where h's plain-HTTP requests get their upstream connections.
func (h *Conn) Pooled() Upstreams { return pooledUpstream{h} }

func (pu pooledUpstream) Get(ctx context.Context, ex *Exchange, fresh bool) (*pool.Conn, error) {
	u, err := pu.h.Env.Pool.Get(ctx, pool.Key{Scheme: ex.Scheme, Host: ex.Req.Host, Port: ex.Req.Port}, fresh)
	if err != nil {
		return nil, err
	}
	if !pu.h.Client.SetUpstream(u.Net) {
		u.Close()
		return nil, pool.ErrServerClosing
	}
	return u, nil
}

func (pu pooledUpstream) Done(u *pool.Conn, reusable bool) {
	if pu.h.Client.SetUpstream(nil) && reusable {
		pu.h.Env.Pool.Put(u)
		return
	}
	u.Close()
}
