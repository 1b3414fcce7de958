package proxy

import (
	"encoding/base64"
	"strings"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// checkBasic checks a Proxy-Authorization value, "Basic base64(user:pass)"
// (scheme case-insensitive), against token. The user must be non-empty and
// the password equal to token (compared in constant time). It returns the
// user.
func checkBasic(value, token string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(cred, "=")); err != nil {
			return "", false
		}
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" {
		return "", false
	}
	return user, serve.TokenEqual(pass, token)
}

// authenticate checks a request head's proxy credentials. With no token
// configured every client passes, as user "" (its Proxy-Authorization, if
// any, is forwarded). With a token, exactly one valid Proxy-Authorization
// is needed; consumed then says it is ours and is not forwarded.
func (s *Server) authenticate(h *http1.RequestHead) (user string, consumed, ok bool) {
	if s.Token == "" {
		return "", false, true
	}
	values := h.Values("proxy-authorization")
	if len(values) != 1 {
		return "", false, false
	}
	user, ok = checkBasic(values[0], s.Token)
	if !ok {
		return "", false, false
	}
	return user, true, true
}
