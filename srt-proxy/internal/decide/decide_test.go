package decide

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

func ptr(s string) *string { return &s }

func TestAllowVerdictCredentials(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:ghp_1"))
	tests := []struct {
		name, class, host, want string
	}{
		{"github to github.com", "github", "github.com", basic},
		{"github elsewhere", "github", "api.github.com", "Bearer ghp_1"},
		{"another class to github.com", "gitlab", "github.com", "Bearer ghp_1"},
	}
	for _, tt := range tests {
		v := allowVerdict(&protocol.Allow{ID: 1, Cred: ptr(tt.class), Credential: ptr("ghp_1"),
			SetHeaders: protocol.Headers{{Name: "x-a", Values: []string{"1"}}}, RemoveHeaders: []string{"x-b"}}, tt.host)
		if got := v.SetHeaders["authorization"]; len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: authorization %q, want %q", tt.name, got, tt.want)
		}
		if got := strings.Join(v.RemoveHeaders, ","); got != "x-b,authorization,proxy-authorization,cookie,x-api-key" {
			t.Errorf("%s: removes %s", tt.name, got)
		}
		if got := v.SetHeaders["x-a"]; len(got) != 1 {
			t.Errorf("%s: x-a %q", tt.name, got)
		}
	}
	// No credential: the edits as they are.
	v := allowVerdict(&protocol.Allow{ID: 1, SetHeaders: protocol.Headers{{Name: "x-gone", Values: []string{}}}}, "a.test")
	if vals, ok := v.SetHeaders["x-gone"]; !ok || len(vals) != 0 || v.RemoveHeaders != nil {
		t.Errorf("got %+v", v)
	}
}

func TestToReq(t *testing.T) {
	r := &ask.Request{Kind: ask.KindHTTP, User: "u", Method: "GET", Host: "a.test", Port: 80, Path: "/",
		HostHeader: "a.test", SNI: "a.test", Query: "q",
		Headers: map[string][]string{"b": {"1"}, "a": {"2", "3"}}, HeaderNames: []string{"b", "a"}}
	got, err := protocol.Encode(withID(toReq(r, false)))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"t":"req","id":1,"method":"GET","host":"a.test","port":80,"hostHeader":"a.test","sni":"a.test","path":"/","query":"q","headers":{"b":["1"],"a":["2","3"]}}`; string(got) != want {
		t.Errorf("without srt.v1:\n got %s\nwant %s", got, want)
	}
	r.HeaderNames = nil
	got, _ = protocol.Encode(withID(toReq(r, true)))
	if want := `{"t":"req","id":1,"method":"GET","host":"a.test","port":80,"hostHeader":"a.test","sni":"a.test","path":"/","query":"q","headers":{"a":["2","3"],"b":["1"]},"kind":"http","user":"u"}`; string(got) != want {
		t.Errorf("with srt.v1:\n got %s\nwant %s", got, want)
	}
}

func withID(r *protocol.Req) *protocol.Req {
	r.ID = 1
	return r
}
