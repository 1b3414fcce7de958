package mitm

// Sniffed is what the first bytes of a tunnel look like.
type Sniffed int

const (
	NeedMore    Sniffed = iota // too few bytes to tell
	ClientHello                // a TLS handshake record that starts a ClientHello
	NotTLS                     // anything else: an opaque tunnel's bytes
)

// SniffLen is how many bytes Sniff needs to say ClientHello.
const SniffLen = 6

// maxRecord is the largest TLS plaintext record body, 2^14 bytes
// (RFC 8446 §5.1); a ClientHello record claiming more is not TLS.
const maxRecord = 1 << 14

// Sniff classifies the first bytes a client sent into a tunnel: a TLS
// record header (RFC 8446 §5.1: content type 22 handshake, legacy version
// 3.x with x ≤ 4, a length of 1–2^14) followed by handshake type 1
// (ClientHello). It says NotTLS as soon as a byte rules TLS out, and
// NeedMore while b is a proper prefix of a possible ClientHello. SSLv2
// compatible hellos are NotTLS (crypto/tls does not speak them).
func Sniff(b []byte) Sniffed {
	for i := 0; i < len(b) && i < SniffLen; i++ {
		c := b[i]
		switch i {
		case 0:
			if c != 0x16 {
				return NotTLS
			}
		case 1:
			if c != 0x03 {
				return NotTLS
			}
		case 2:
			if c > 0x04 {
				return NotTLS
			}
		case 4:
			if n := int(b[3])<<8 | int(c); n == 0 || n > maxRecord {
				return NotTLS
			}
		case 5:
			if c != 0x01 {
				return NotTLS
			}
			return ClientHello
		}
	}
	return NeedMore
}
