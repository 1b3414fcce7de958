package decide

import (
	"encoding/base64"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// credentialHeaders are the headers a credential travels in. An allow
// that carries a credential removes them all, in any spelling, before the
// credential is placed (the client's own never reach the upstream beside
// it).
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "x-api-key"}

// placement says where a credential of a class goes for a host; the first
// matching row wins, and with none it goes as "Authorization: Bearer".
type placement struct {
	class, host string // "" matches any
	basicUser   string // HTTP Basic with this user and the credential as password
}

// placements are proxy-only mode's defaults (the reference's
// DEFAULT_CREDENTIAL_PLACEMENTS): github.com's git transport takes a token
// as Basic with the user "x-access-token".
var placements = []placement{
	{class: "github", host: "github.com", basicUser: "x-access-token"},
}

// authorization is the Authorization value that carries credential of
// class to host.
func authorization(class, credential, host string) string {
	for _, p := range placements {
		if (p.class == "" || p.class == class) && (p.host == "" || p.host == host) {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(p.basicUser+":"+credential))
		}
	}
	return "Bearer " + credential
}

// allowVerdict turns an allow into the proxy's verdict for a request to
// host: its header edits, and its credential placed (which removes the
// credential headers and sets Authorization).
func allowVerdict(v *protocol.Allow, host string) ask.Verdict {
	out := ask.Verdict{Allow: true}
	if v.RemoveHeaders != nil {
		out.RemoveHeaders = append([]string(nil), v.RemoveHeaders...)
	}
	if len(v.SetHeaders) > 0 {
		out.SetHeaders = make(map[string][]string, len(v.SetHeaders)+1)
		for _, h := range v.SetHeaders {
			out.SetHeaders[h.Name] = h.Values
		}
	}
	if v.Cred != nil && v.Credential != nil {
		out.RemoveHeaders = append(out.RemoveHeaders, credentialHeaders...)
		if out.SetHeaders == nil {
			out.SetHeaders = map[string][]string{}
		}
		// setHeaders may not name authorization, so nothing is overwritten.
		out.SetHeaders["authorization"] = []string{authorization(*v.Cred, *v.Credential, host)}
	}
	return out
}
