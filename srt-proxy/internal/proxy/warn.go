package proxy

import (
	"net"
	"strconv"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// warnOnce tells Server.Warn about an upstream failure a user must fix
// (a certificate nothing trusts), once per destination for the server's
// life: the response says it to every request, stderr once.
func (s *Server) warnOnce(f refusal.UpstreamFailure, host string, port int, text string) {
	if s.Warn == nil || f != refusal.UpstreamCertificateNotTrusted {
		return
	}
	if _, told := s.warned.LoadOrStore(net.JoinHostPort(host, strconv.Itoa(port)), true); !told {
		s.Warn(text)
	}
}
