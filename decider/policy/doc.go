// Package policy is srt's network policy kernel: the domain-pattern grammar
// of network.allowedDomains / network.deniedDomains, the evaluation order
// that turns a destination into a Decision, and the resolved-address rules
// applied when a hostname is dialled directly. The host-name syntax it
// matches against is decider/hostname's (canonical hosts), the text
// hygiene of reasons decider/sanitize's: neither holds policy, and
// srt-proxy uses them without importing this package.
//
// Everything here is pure: no DNS, no files, no sockets, no clocks. The
// proxy resolves names and lists this host's addresses itself and passes the
// results in, so the code a reviewer must trust to keep a sandbox inside its
// allow list is this package alone.
//
// The behaviour follows the reference implementation
// (@anthropic-ai/sandbox-runtime 0.0.83); where it is stricter, the doc
// comment of the function says so. Reason phrases and validation messages
// are exported constants because logs, tests and clients compare them.
package policy
