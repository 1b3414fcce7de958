// Package mitm is the certificate side of srt-proxy's TLS termination
// (network.tlsTerminate): the certificate authority that signs the
// certificates the proxy shows the sandbox, the minting and caching of
// those leaf certificates, and the sniffing of a tunnel's first bytes for a
// TLS ClientHello. It opens no connections and decides nothing; the proxy
// package runs the handshakes and asks the decider.
//
//	caller (srt, or --ca-fd) ──PEM pair──▶ NewCA ─┐
//	                          (none) ──▶ NewEphemeralCA ─┤
//	                                                  ▼
//	proxy: CONNECT allowed ─▶ Sniff(first bytes) ─▶ ClientHello? ─▶ CA.Leaf(name) ─▶ tls.Server
//	                                                   │             (LRU, 256 names,
//	                                                   └── no ─▶ opaque tunnel or destroy   one leaf key per CA)
//
// The CA's key may be RSA or ECDSA (the reference accepts RSA only); every
// leaf has an ECDSA P-256 key, one key per CA generated when the CA is
// made, so a new name costs one signature and no key generation.
package mitm
