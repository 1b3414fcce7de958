// Package protocol is the codec of the decider protocol
// (docs/decider-protocol.md): the messages srt-proxy and a decider exchange,
// their strict decoding and validation in both directions, their canonical
// encoding, and the two framings that carry them.
//
// The codec is part of srt's security kernel: a request is forwarded only on
// a well-formed allow, so every message is checked against every rule of the
// spec before anyone acts on it, and any violation is a *ProtocolError whose
// Reason is a fixed phrase (Reason* constants) that kills the link.
//
//	proxy                                          decider
//	  │ ── {"t":"hello","proto":1[,"ext":["srt.v1"]]} ──────▶ │
//	  │ ◀── {"t":"hello","proto":1,"allowedDomains":[…],      │
//	  │        "deniedDomains":[…][,"ext":["srt.v1"], …]} ─── │
//	  │  (the listener opens only now)                        │
//	  │                                                       │
//	  │ ── {"t":"req","id":1,"method":"GET","host":…} ──────▶ │
//	  │ ◀────────── {"t":"verdict","id":1,"action":"allow"} ─ │   forwarded
//	  │                                                       │
//	  │ ── {"t":"req","id":2,"method":"POST",…} ────────────▶ │
//	  │ ◀── {"t":"verdict","id":2,"action":"need_body",       │
//	  │        "max":65536} ───────────────────────────────── │
//	  │ ── {"t":"body","id":2,"data":"<base64>"[,"cut":true]}▶│
//	  │ ◀── {"t":"verdict","id":2,"action":"deny",            │
//	  │        "status":403,"reason":"no uploads"} ────────── │   refused
//	  │                                                       │
//	  │ ── {"t":"req","id":3,…} ────────────────────────────▶ │
//	  │        … 5 s, no verdict …                            │   503 decider_unavailable
//	  │ ◀── {"t":"verdict","id":3,…} (late: dropped) ──────── │
//
// With the srt.v1 extension (offered and accepted in the hellos, line
// framing only) a req also carries "kind" and, when the client gave one,
// "user", the decider may send
// "update" at any time, and the proxy sends "refused" when it turns down a
// request after an allow.
//
// With srt.mask.v1 (accepted beside srt.v1) the decider may send "masks",
// which give the proxy masked secrets or drop them, and an allow may carry
// "inject", the masks the proxy puts back into that request.
//
// What this package does not do is keep the link's state: which ids are
// pending, timers, the body budget, "hello first". The decoders are told
// only which extensions are in force (for a hello: which may be offered or
// accepted), and judge one message at a time. The one exception is
// MaskTable, the masks of a link, whose rules both ends must apply alike.
//
// Decisions the spec once left open, stated there now (its "Validation"
// section) and noted here where they are made:
//
//   - JSON numbers in integer fields are integers spelled without a fraction
//     or an exponent: 400.0 and 4e2 are refused, although JavaScript reads
//     both as 400.
//   - Precedence of violations in one frame: not UTF-8, then not JSON, then
//     not one object, then the first null or lone surrogate in document
//     order, then a duplicate key, then the message's own rules. Nesting
//     deeper than 32 levels stops the parse ("frame nested too deeply"); no
//     message nests more than 3.
//   - A t that the direction does not carry (or an srt.v1 message when
//     srt.v1 is not in force) is "unexpected message".
//   - String fields other than header values, the Host header and reasons
//     (method, host, sni, path, query, user, cred) contain no control
//     character at all; host and sni have no upper-case ASCII; the method is
//     a token. Under srt.v1, "connect" and "socks" requests have method
//     CONNECT, path "*" and no query; "socks" ones have no Host header, SNI
//     or headers; an "http" one is not a CONNECT.
//   - A req's header names each have at least one value; an allow's
//     setHeaders may give a name no value (the reference accepts that; it
//     removes the header).
//   - An allow's setHeaders and removeHeaders keep the protocol's header
//     limits (190 values or names, 64 KiB), as the reference does.
//   - "update" may omit deniedResolvedAddresses (then there are none), as the
//     hello may.
//   - A body's data is standard padded base64 with no line breaks, at most
//     MaxBody bytes decoded.
package protocol
