// Package srtlink is what srt and srt-proxy agree on when srt runs
// srt-proxy for its sandboxes (srt-proxy's "srt mode"): one typed
// definition of each contract, which both programs use, and whose
// conformance vectors (shared/srtlink) both programs' tests read.
//
//   - The handoff channel (Message, Send, Receiver): how srt gives
//     srt-proxy the listening sockets of each sandbox and takes them back,
//     and how srt-proxy says it serves.
//   - The command line (ProxyFlags): the settings srt-proxy reads once, when
//     it starts, as the flags of --srt-mode.
//   - The attribution user (UserFor, KeyLabel, UserLabel): the proxy user
//     name "srt.<label>" that names the command a connection belongs to;
//     srt puts it in the sandbox's proxy credentials and in a capture
//     listener's handoff, srt-proxy passes it to the decider as the
//     request's user, and the decider finds the command's own allow list
//     by it.
//
// The package lives in the decider module because srt and srt-proxy both
// depend on that module and on nothing of each other.
//
// # The handoff channel
//
// One JSON object per line on a Unix socket pair, the sockets riding
// along as SCM_RIGHTS, sent with the line's bytes (one sendmsg). A stream
// keeps no boundaries, so Receiver reads a byte at a time: the sockets
// that come with a read are then those of the line that byte is in,
// whatever lines the kernel would have joined into one larger read. The
// end of the stream means srt is gone, and
// srt-proxy stops. A "listen" with a relay hands over sockets whose
// connections srt-proxy relays byte for byte to an external proxy on this
// host's localhost (network.httpProxyPort, socksProxyPort) instead of
// serving them.
//
// The other way, srt-proxy sends one line once it has started: "ready"
// when it serves (the decider said hello; the CA is loaded and the trust
// bundle written when it terminates TLS), or "failed" with what went
// wrong, and then it exits. srt waits for that line before it uses the
// proxy (srt/internal/egress). Started without a decider (srt does so when
// every sandbox port is relayed), srt-proxy only relays, and is ready at
// once.
//
// A "listen" with a role hands over the sockets of the sandbox's network
// namespace (docs/architecture.md, "Captured connections and the sandbox's
// name server"): role "capture" sockets listen where the namespace's NAT
// rules send every TCP connection the sandbox makes to an address outside
// it (and to the loopback ports of allowedDomains entries), and srt-proxy
// decides each like a CONNECT to its original destination; role "dns"
// sockets (one UDP, one TCP) are the sandbox's name server, which answers A
// and AAAA with addresses of a fake range that srt-proxy maps back to the
// name. "user" is the attribution user of the sandbox (UserFor, what its
// proxy credentials carry); "loopback" maps an original loopback
// destination ("127.0.0.1:8765", "[::1]:8765") to the host an
// allowedDomains entry named it by ("localhost"); a destination it does not
// list is asked about as its IP literal. srt sends one "listen" per role
// (Egress.AddCapture); "close" closes them with the sandbox's other
// sockets.
//
//	srt                                           srt-proxy
//	  │                                              │ TLS set-up, decider hello
//	  │ ◀── {"t":"ready"} ─────────────────────────── │
//	  │      or {"t":"failed","error":"tlsTerminate: …","setting":"tlsTerminate"}
//	  │ ── {"t":"listen","id":"…"} + SCM_RIGHTS ─────▶ │ serves them
//	  │ ── {"t":"listen","id":"…","relay":{"port":8080,"setting":"httpProxyPort"}}
//	  │                           + SCM_RIGHTS ─────▶ │ relays them to localhost:8080
//	  │ ── {"t":"listen","id":"…","role":"capture","user":"srt.…",
//	  │       "loopback":{"127.0.0.1:8765":"localhost"}} + SCM_RIGHTS ─▶ │ decides every connection
//	  │ ── {"t":"listen","id":"…","role":"dns"}
//	  │                           + SCM_RIGHTS ─────▶ │ answers DNS (UDP and TCP)
//	  │ ── {"t":"close","id":"…"} ──────────────────▶ │ closes them
//	  │ ── {"t":"sync","q":N} ──────────────────────▶ │ ── sync {id N} ──▶ decider ── sync {q N} ──▶ srt
//	  │ ── end of stream ───────────────────────────▶ │ stops
//
// Each line is Encode's: the fields in Message's order, empty ones left
// out, no space; a receiver ignores a field it does not know.
//
// # The command line
//
// srt starts srt-proxy with ProxyFlags.Args: "--srt-mode", the descriptors
// of the decider's socket and of the handoff channel, then one flag per
// setting srt-proxy reads at start (the parent proxy, the request options,
// TLS termination), each "--name=value" so that a value starting with "-"
// stays a value. srt-proxy reads them back with ParseProxyFlags, which
// checks them as srt's settings are checked (srt-proxy does not trust its
// command line more than srt trusts the settings). The proxy credential is
// not a flag: it travels in the environment (TokenEnv), out of every
// process listing.
package srtlink
