// Package proxy is srt-proxy's front end: it accepts connections on the
// listeners it is given, tells SOCKS from HTTP by the first byte, speaks
// HTTP/1.1 forward proxying (absolute-form requests and CONNECT) and SOCKS5,
// checks the proxy credentials, asks the decider (an Asker) once per
// plain-HTTP request and once per tunnel, and renders every refusal. It
// holds no policy: what may pass is the Asker's answer, and which address
// may be dialled is the dial package's.
//
// One connection, from accept to the decision line:
//
//	client            Server                        Asker            dial.Dialer
//	  │── first byte ──▶│ 0x05 SOCKS5, 0x04 SOCKS4, else HTTP
//	  │── request ─────▶│ authenticate (407 / RFC 1929 failure)
//	  │                 │── Ask(Request) ────────────▶│
//	  │                 │◀──────────── Verdict ───────│  (error: 503 / SOCKS 0x01)
//	  │◀── 403 / 0x02 ──│ deny
//	  │                 │── Tunnel / HTTP (pooled) ─────────────────────▶│
//	  │                 │◀──────────── AddressRefusedError / UnreachableError
//	  │◀── 403 / 502 ───│  and Asker.Refused(Request, reason)
//	  │◀══ bytes ══════▶│ allowed: tunnel (splice) or relayed response
//	                    └─ one zerolog line per connection or request
//
// The Server is the accept loop and the decision seam; what it hands a
// connection to is a package a reviewer can read alone:
//
//	proxy       Server: accept, first byte, shutdown; srt's mode (plain HTTP, CONNECT);
//	            the decision line and the Observer
//	├─ socks5     SOCKS5 from negotiation to tunnel; SOCKS4 refused
//	├─ proxyonly  proxy-only mode: host gate, strict targets, its order of refusals
//	├─ captured   captured connections, decided as CONNECTs, refused with a reset
//	├─ terminate  TLS termination: slots, handshake, one decision per request inside
//	├─ forward    HTTP/1.1 on a client connection: refusals written, requests forwarded, responses relayed
//	├─ pool       kept-alive upstream connections, the plain-HTTP pool, upstream failures told
//	├─ serve      what every handler shares: Env, Conn, Record, Tunnel
//	├─ rules      the request options (refuseOpaqueTunnels, requireHostMatch, …)
//	├─ http1      HTTP/1.1 syntax: heads, framing, bodies, hop-by-hop, targets
//	├─ refusal    causes, reasons and both modes' renderers
//	├─ bulk       TLS record batching under a terminated tunnel
//	└─ ask        Request, Verdict, Asker: the seam to the decider (internal/decide)
//
// An allowed plain-HTTP request is forwarded by the goroutine that read it
// (package forward): the head written, the response read and relayed,
// over an upstream connection kept alive between requests — the server's
// pool (package pool) for plain HTTP, the tunnel's own for a terminated
// tunnel. No goroutine of its own runs per request or per upstream
// connection, save one that sends a request body while the response is
// awaited.
package proxy
