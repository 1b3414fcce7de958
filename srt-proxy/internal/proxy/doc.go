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
// An allowed plain-HTTP request is forwarded by the goroutine that read it
// (package forward): the head written, the response read and relayed,
// over an upstream connection kept alive between requests — the server's
// pool (package pool) for plain HTTP, the tunnel's own for a terminated
// tunnel. No
// goroutine of its own runs per request or per upstream connection, save
// one that sends a request body while the response is awaited.
package proxy
