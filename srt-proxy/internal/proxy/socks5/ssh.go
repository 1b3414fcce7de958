package socks5

import (
	"encoding/binary"
	"strings"
)

// The in-band refusal a SOCKS5 client that cannot authenticate gets for an
// SSH destination (§4.4): after a successful SOCKS reply, an SSH server
// identification and a plaintext SSH_MSG_DISCONNECT, which OpenSSH prints
// ("Received disconnect from …: <text>").
const (
	sshIdentification = "SSH-2.0-policy_refusal\r\n"
	// defaultSSHRefusal is the disconnect text unless a deny reason for the
	// destination replaces it.
	defaultSSHRefusal = "This proxy requires authentication, and this client did not offer an authentication method, so the connection was refused."

	sshMsgDisconnect          = 1 // RFC 4253 §11.1
	sshDisconnectHostNotAllow = 1 // SSH_DISCONNECT_HOST_NOT_ALLOWED_TO_CONNECT
	maxSSHRefusalRunes        = 1000
)

// sshDisconnect is a plaintext SSH_MSG_DISCONNECT binary packet (RFC 4253
// §6: no MAC before key exchange, the length plus padding a multiple of 8,
// at least 4 bytes of padding, here zeros). Runs of control characters in
// the text become one space and it is cut to 1000 characters, so a
// configured reason cannot forge extra lines.
func sshDisconnect(text string) []byte {
	desc := sshText(text)
	payload := make([]byte, 0, 13+len(desc))
	payload = append(payload, sshMsgDisconnect)
	payload = binary.BigEndian.AppendUint32(payload, sshDisconnectHostNotAllow)
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(desc)))
	payload = append(payload, desc...)
	payload = binary.BigEndian.AppendUint32(payload, 0) // language tag
	padding := 8 - (4+1+len(payload))%8
	if padding < 4 {
		padding += 8
	}
	packet := binary.BigEndian.AppendUint32(nil, uint32(1+len(payload)+padding))
	packet = append(packet, byte(padding))
	packet = append(packet, payload...)
	return append(packet, make([]byte, padding)...)
}

// sshText collapses control characters (C0, DEL, C1) and cuts the text.
func sshText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	inRun, n := false, 0
	for _, r := range s {
		if n == maxSSHRefusalRunes {
			break
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			if !inRun {
				b.WriteByte(' ')
				n++
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteRune(r)
		n++
	}
	return b.String()
}
