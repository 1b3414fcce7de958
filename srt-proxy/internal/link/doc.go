// Package link is srt-proxy's side of the decider protocol: it says hello,
// numbers the requests, sends them to the decider, matches verdicts to
// them, times them out, and fails closed.
//
// One Link serves a whole proxy. Any protocol violation in either
// direction, or the decider closing the stream, kills it: every pending
// and every later request gets an error ("request decider: <why>"), which
// the proxy turns into 503 decider_unavailable, and Dead is closed so the
// process can stop.
//
//	proxy (Link)                                   decider
//	  │ ── hello {proto 1, ext [srt.v1]} ───────────────▶ │
//	  │ ◀── hello {lists, ext [srt.v1], …} ────────────── │   Dial returns
//	  │ ── req {id 1, …} ─────────────────────────────────▶ │   Ask waits ≤ timeout
//	  │ ◀── verdict {id 1, allow} ──────────────────────── │   Ask returns
//	  │ ◀── update {lists} ─────────────────────────────── │   OnUpdate
//	  │ ── refused {id 1, reason} ──────────────────────────▶ │   Refused
package link
