package terminate

import (
	"bufio"
	"crypto/tls"
	"time"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/bulk"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/pool"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// tlsSession is one terminated tunnel: HTTP/1.1 requests read from the
// client's decrypted stream, each asked about and forwarded over one
// upstream TLS connection kept alive between requests.
type tlsSession struct {
	env     *serve.Env
	t       *Terminate
	outer   *serve.Conn   // the accepted connection: its idle flag, and the upstream closed with it
	tc      *tls.Conn     // the client's side, decrypted
	bulk    *bulk.Conn    // under tc
	h       *forward.Conn // HTTP/1.1 over tc: heads, refusals, 100 Continue
	connect *ask.Request  // the CONNECT that opened the tunnel
	sni     string        // the client's TLS server name, lower-cased; "" when none

	upc *pool.Conn // the upstream connection; nil until the first allowed request

	up, down int64  // body bytes over the tunnel's life, for the CONNECT's record
	addr     string // the upstream address last dialled
}

func newTLSSession(env *serve.Env, t *Terminate, outer *serve.Conn, tc *tls.Conn, bulk *bulk.Conn, connect *ask.Request) *tlsSession {
	x := &tlsSession{env: env, t: t, outer: outer, tc: tc, bulk: bulk, connect: connect,
		sni: hostname.LowerASCII(tc.ConnectionState().ServerName)}
	x.h = &forward.Conn{Env: env, Client: &serve.Conn{Raw: tc}, BR: bufio.NewReaderSize(tc, 4096), BW: bufio.NewWriterSize(tc, 4096),
		Stall: x.stall(), Bulk: bulk, KeepAlive: keepAliveAnswer, TrustFix: x.t.TrustFix}
	return x
}

// serve reads requests until the client closes, stays idle too long
// (FirstRequestTimeout after the ClientHello, IdleTimeout after a
// response) or a request ends the connection.
func (x *tlsSession) serve(helloAt time.Time) {
	defer x.dropUpstream()
	next := helloAt.Add(orDefault(x.t.FirstRequestTimeout, defaultFirstRequest))
	for {
		x.outer.Idle.Store(true)
		if x.env.Closing() {
			x.outer.Idle.Store(false)
			break
		}
		x.tc.SetReadDeadline(next)
		_, err := x.h.BR.Peek(1)
		x.outer.Idle.Store(false)
		if err != nil {
			break
		}
		x.tc.SetReadDeadline(time.Now().Add(forward.HeadTimeout))
		if !x.serveOne() {
			// The last answer must not be lost to a reset caused by what
			// the client still sends.
			x.tc.SetWriteDeadline(time.Now().Add(time.Second))
			serve.LingerClose(x.tc)
			return
		}
		next = time.Now().Add(orDefault(x.t.IdleTimeout, defaultTLSIdle))
	}
	x.tc.SetWriteDeadline(time.Now().Add(time.Second))
	x.tc.Close()
}

func (x *tlsSession) stall() time.Duration { return orDefault(x.t.StallTimeout, defaultStall) }
