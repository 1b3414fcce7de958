// Package http1 is the HTTP/1.1 syntax srt-proxy reads and writes: request
// heads (ReadHead: CRLF only, no obs-fold, token names, bounded), body
// framing (Framing: the smuggling vectors refused) and the request body as
// it is forwarded (RequestBody), the hop-by-hop headers a proxy does not
// forward, request-targets (absolute form, CONNECT's authority form, and
// the forms read inside a terminated tunnel, with the normalisation that
// keeps the decider and the upstream looking at the same resource), and
// what of a head the decider is shown (AskHeaders, Unaskable: the decider
// protocol's limits).
//
// Everything here parses or builds bytes: no connection is dialled, no
// decision made, nothing logged. Every parser has a fuzzer.
package http1
