// Package link is srt-proxy's side of the decider protocol: it says hello,
// numbers the requests, sends them to the decider, matches verdicts to
// them, reads a request's body when the decider asks for it, times the
// waits out, and fails closed.
//
// One Link serves a whole proxy. Any protocol violation in either
// direction, or the decider closing the stream, kills it: every pending
// and every later request gets an error ("request decider: <why>"), which
// the proxy turns into 503 decider_unavailable, and Dead is closed so the
// process can stop.
//
//	proxy (Link)                                   decider
//	  │ ── hello {proto 1[, ext [srt.v1]]} ─────────────▶ │
//	  │ ◀── hello {lists[, ext [srt.v1], …]} ──────────── │   Dial returns
//	  │ ── req {id 1, …} ─────────────────────────────────▶ │   Ask: timer (5 s)
//	  │ ◀── verdict {id 1, allow} ──────────────────────── │   Ask returns it
//	  │ ── req {id 2, …} ─────────────────────────────────▶ │   timer
//	  │ ◀── verdict {id 2, need_body, max} ─────────────── │   body budget reserved;
//	  │         (the body is read: no timer; a deny may     │   Body.Read(max)
//	  │          come, anything else kills the link)        │
//	  │ ── body {id 2, data[, cut]} ───────────────────────▶ │   timer again
//	  │ ◀── verdict {id 2, deny} ───────────────────────── │   Ask returns it
//	  │ ◀── update {lists} (srt.v1) ────────────────────── │   OnUpdate
//	  │ ── refused {id 1, reason} (srt.v1) ────────────────▶ │   Refused
//	  │ ◀── masks {masks | drop} (srt.mask.v1) ─────────── │   the mask table
//	  │ ◀── verdict {id 3, allow, inject [ids]} ────────── │   Ask returns the masks
//
// The link's own rules, on top of the codec's (decider/protocol):
//
//   - A request ends at its first allow or deny. need_body may come once;
//     a second kills the link ("a second need_body"), and while the body
//     is read only a deny may come ("a verdict other than deny while the
//     body was read").
//   - Bodies held for inspection are limited to MaxBodyHeld (64 MiB) in
//     all: a need_body past it fails that request ("too many request
//     bodies held for inspection") and the link lives on.
//   - Messages queued unread towards the decider are limited to
//     ⌈MaxBodyHeld·4/3⌉ + 32 MiB; past that the decider is not reading and
//     the link dies ("not reading: N bytes queued"). Sending never blocks.
//   - A verdict for an id nothing waits on is dropped when that request
//     was given up on (timed out, refused, abandoned) — except a need_body
//     after one already came ("need_body where none may come") — or when
//     it is 4096 or more below the newest id; otherwise it kills the link
//     ("verdict for id N, which nothing waits on").
//   - srt.mask.v1 (offered with srt.v1): the link keeps the masks the
//     decider gives until it drops them (protocol.MaskTable, whose
//     reasons kill the link: "mask id X given twice", …). An allow's
//     inject is resolved when the allow is read, into the masks Ask
//     returns; an unknown id ("inject names unknown mask X"), or inject on
//     a req that is not http ("inject on an allow of a req whose kind is
//     not http"), kills the link. Values are never logged.
package link
