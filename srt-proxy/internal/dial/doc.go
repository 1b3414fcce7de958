// Package dial is the only code in srt-proxy that opens outbound
// connections. It resolves a destination host once, drops every address the
// current resolved-address policy refuses (decider/policy.AddressPolicy),
// dials a survivor — and no other address — and reports failures as typed
// errors: *AddressRefusedError when the policy left nothing to dial,
// *UnreachableError when nothing could be reached. TLS opens the upstream
// leg of a TLS-terminated tunnel the same way and verifies the upstream's
// certificate on it (against UpstreamRoots: the host's roots and the
// settings' extra CA files). HTTP opens the connections the proxy forwards
// plain-HTTP requests over (and keeps alive between them).
//
// A destination goes through a parent proxy (the settings' parentProxy or
// srt's own HTTP_PROXY / HTTPS_PROXY) unless NO_PROXY exempts it: tunnels
// (HTTP CONNECT and SOCKS5) use the parent's https URL, plain HTTP its http
// URL. The parent resolves the name then, so the resolved-address check does
// not apply to parent-proxied connections (the reference behaves the same).
//
//	proxy ──Tunnel(host, port)──▶ Dialer ──▶ parent? ── yes ─▶ CONNECT host:port via parent
//	                                   │
//	                                   └── no ─▶ IP literal? ── yes ─▶ dial it
//	                                                  │
//	                                                  └── no ─▶ Resolve once ─▶ FilterAddrs ─▶ dial survivors in order
package dial
