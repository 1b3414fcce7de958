// Package proxyonly is proxy-only mode (`srt proxy`, srt-proxy alone:
// the egress gate of a workload that runs elsewhere; §2.2): its host gate,
// its stricter reading of request-targets and Host headers, and its
// handling of each HTTP request and CONNECT, in the reference's order of
// refusals. The decider is asked about every request, never about a
// connection; a CONNECT is TLS-terminated or refused.
package proxyonly

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// HostGate is the host gate of proxy-only mode (`srt-proxy` alone, the
// egress gate of a workload that runs elsewhere; §2.2): the decider's
// lists, applied before the decider is asked (decide.HostGate). Set it on
// proxy.Server.ProxyOnly, with refusal.ProxyOnlyMode as the Mode and no
// Token; nil is srt's own mode.
//
// What changes with it:
//
//   - The host gate: a destination on the lists' deniedDomains, or on no
//     allowedDomains entry, is refused (host_not_allowed) without asking
//     the decider. The decider is asked about each HTTP request, never
//     about a connection.
//   - A CONNECT passes the gate and is then TLS-terminated (proxy.Server.TLS,
//     given a CA by --ca-fd) or refused (opaque_tunnel). A SOCKS5 client
//     gets reply 0x02: the proxy tunnels nothing it cannot inspect.
//   - A plain-HTTP request must name its destination in plain ASCII; its
//     request-target goes to the decider and upstream as spelled; its Host
//     header must name the target (else 421 misdirected); TRACE and TRACK
//     are refused (405); the decider may read its body (need_body); an
//     allow that sets headers is refused (plaintext_header_set) unless
//     Rules.PlaintextHeaderSet.
//   - Hop-by-hop headers are recognised with '-', '_' and '.' folded, and
//     Proxy-Authorization is one of them (there is no proxy
//     authentication); response headers in Rules.StripResponseHeaders
//     never reach the client.
//
// The fixed policy of the tunnels (refuse opaque tunnels, require host
// match, targets as spelled) is proxy.Server's Rules, which the caller sets.
type HostGate interface {
	// Allows is the gate for a canonical host and port; why is the
	// policy's reason for a refusal (for the decision record).
	Allows(host string, port int) (ok bool, why string)
}

// HeadLimit is the largest request head proxy-only mode reads
// (proxy.Server.MaxHeadBytes): above the decider's 1 MiB frame, so that a
// request past the protocol's limits is refused by those limits (400
// bad_request, with their reason) and not by the head reader.
const HeadLimit = 2 << 20

// Serve serves one request of proxy-only mode read on h (a CONNECT, to
// terminate with t, or a plain-HTTP request), with gate as the host gate;
// it reports whether the connection may carry another.
func Serve(gate HostGate, t *terminate.Terminate, h *forward.Conn, head *http1.RequestHead, rec *serve.Record) bool {
	return mode{Env: h.Env, gate: gate, tls: t}.serve(h, head, rec)
}

// mode is proxy-only mode as its handlers see it.
type mode struct {
	*serve.Env
	gate HostGate
	tls  *terminate.Terminate
}
