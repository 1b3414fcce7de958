package refusal

// SOCKS5 reply codes (RFC 1928 §6).
const (
	SOCKSSucceeded       = 0x00
	SOCKSGeneralFailure  = 0x01
	SOCKSNotAllowed      = 0x02
	SOCKSHostUnreachable = 0x04
	SOCKSConnRefused     = 0x05
	SOCKSCmdUnsupported  = 0x07
	SOCKSAddrUnsupported = 0x08
)
