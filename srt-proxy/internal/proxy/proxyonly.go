package proxy

import ()

// HostGate is the host gate of proxy-only mode (`srt-proxy` alone, the
// egress gate of a workload that runs elsewhere; §2.2): the decider's
// lists, applied before the decider is asked (decide.HostGate). Set it on
// Server.ProxyOnly, with ProxyOnlyMode as the Mode and no Token; nil is
// srt's own mode.
//
// What changes with it:
//
//   - The host gate: a destination on the lists' deniedDomains, or on no
//     allowedDomains entry, is refused (host_not_allowed) without asking
//     the decider. The decider is asked about each HTTP request, never
//     about a connection.
//   - A CONNECT passes the gate and is then TLS-terminated (Server.TLS,
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
// match, targets as spelled) is the Server's Rules, which the caller sets.
type HostGate interface {
	// Allows is the gate for a canonical host and port; why is the
	// policy's reason for a refusal (for the decision record).
	Allows(host string, port int) (ok bool, why string)
}

// ProxyOnlyHeadLimit is the largest request head proxy-only mode reads
// (Server.MaxHeadBytes): above the decider's 1 MiB frame, so that a
// request past the protocol's limits is refused by those limits (400
// bad_request, with their reason) and not by the head reader.
const ProxyOnlyHeadLimit = 2 << 20
