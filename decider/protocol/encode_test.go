package protocol

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

func TestEncodeCanonical(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"proxy hello", &ProxyHello{}, `{"t":"hello","proto":1}`},
		{"proxy hello offer", &ProxyHello{Ext: []string{ExtSRTv1}}, `{"t":"hello","proto":1,"ext":["srt.v1"]}`},
		{"decider hello nil lists", &DeciderHello{}, `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[]}`},
		{"decider hello srt.v1", &DeciderHello{
			AllowedDomains: []string{"example.com"}, DeniedDomains: []string{},
			Ext: []string{ExtSRTv1}, DeniedResolvedAddresses: []string{"10.0.0.0/8"},
		}, `{"t":"hello","proto":1,"allowedDomains":["example.com"],"deniedDomains":[],"ext":["srt.v1"],"deniedResolvedAddresses":["10.0.0.0/8"]}`},
		{"req", &Req{
			ID: 3, Method: "GET", Host: "example.com", Port: 443, HostHeader: ptr("example.com"),
			SNI: ptr("example.com"), Path: "/a", Query: ptr("b=1"),
			Headers: Headers{{"x-b", []string{"2", "1"}}, {"accept", []string{"*/*"}}},
		}, `{"t":"req","id":3,"method":"GET","host":"example.com","port":443,"hostHeader":"example.com","sni":"example.com","path":"/a","query":"b=1","headers":{"x-b":["2","1"],"accept":["*/*"]}}`},
		{"req srt.v1", &Req{ID: 1, Method: "CONNECT", Host: "example.com", Port: 443, Path: "*", Kind: KindSOCKS, User: "srt"},
			`{"t":"req","id":1,"method":"CONNECT","host":"example.com","port":443,"path":"*","kind":"socks","user":"srt"}`},
		{"req srt.v1 without a user", &Req{ID: 1, Method: "GET", Host: "example.com", Port: 80, Path: "/", Kind: KindHTTP},
			`{"t":"req","id":1,"method":"GET","host":"example.com","port":80,"path":"/","kind":"http"}`},
		{"body", &Body{ID: 2, Data: []byte("hi?"), Cut: true}, `{"t":"body","id":2,"data":"aGk/","cut":true}`},
		{"body empty", &Body{ID: 2}, `{"t":"body","id":2,"data":""}`},
		{"refused", &Refused{ID: 9, Reason: "resolved to a loopback address"}, `{"t":"refused","id":9,"reason":"resolved to a loopback address"}`},
		{"sync", &Sync{ID: 3}, `{"t":"sync","id":3}`},
		{"allow", &Allow{ID: 1, SetHeaders: Headers{{"x-a", []string{"1"}}}, RemoveHeaders: []string{"x-b"}, Cred: ptr("github"), Credential: ptr("tok")},
			`{"t":"verdict","id":1,"action":"allow","setHeaders":{"x-a":["1"]},"removeHeaders":["x-b"],"cred":"github","credential":"tok"}`},
		{"deny", &Deny{ID: 1, Status: 418, Reason: ptr("no tea")}, `{"t":"verdict","id":1,"action":"deny","status":418,"reason":"no tea"}`},
		{"need_body", &NeedBody{ID: 1, Max: 65536}, `{"t":"verdict","id":1,"action":"need_body","max":65536}`},
		{"update", &Update{}, `{"t":"update","allowedDomains":[],"deniedDomains":[]}`},
		// JSON.stringify's escapes: C0 as short escapes or \u00xx, the rest raw.
		{"escapes", &Deny{ID: 1, Status: 403, Reason: ptr("\t\"\\/<>&\u00a0\u2028é😀")},
			"{\"t\":\"verdict\",\"id\":1,\"action\":\"deny\",\"status\":403,\"reason\":\"\\t\\\"\\\\/<>&\u00a0\u2028é😀\"}"},
		{"path escapes", &Req{ID: 1, Method: "GET", Host: "h", Port: 80, Path: "/\"\\", Headers: Headers{{"x", []string{"\tv"}}}},
			`{"t":"req","id":1,"method":"GET","host":"h","port":80,"path":"/\"\\","headers":{"x":["\tv"]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.m)
			if err != nil {
				t.Fatalf("Encode: %v (%s)", err, detail(err))
			}
			if string(got) != tc.want {
				t.Fatalf("Encode =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	req := func(edit func(r *Req)) *Req {
		r := &Req{ID: 1, Method: "GET", Host: "example.com", Port: 80, Path: "/"}
		edit(r)
		return r
	}
	cases := []struct {
		name   string
		m      Message
		reason string
	}{
		{"empty offer", &ProxyHello{Ext: []string{}}, ReasonBadHello},
		{"accepts unknown ext", &DeciderHello{Ext: []string{"x.v1"}}, ReasonBadHello},
		{"dra without srt.v1", &DeciderHello{DeniedResolvedAddresses: []string{"10.0.0.0/8"}}, ReasonBadHello},
		{"bad entry", &DeciderHello{AllowedDomains: []string{"*"}}, ReasonBadHello},
		{"req id 0", req(func(r *Req) { r.ID = 0 }), ReasonBadReq},
		{"req id over", req(func(r *Req) { r.ID = MaxID + 1 }), ReasonBadReq},
		{"req empty sni", req(func(r *Req) { r.SNI = ptr("") }), ReasonBadReq},
		{"req empty query", req(func(r *Req) { r.Query = ptr("") }), ReasonBadReq},
		{"req empty headers", req(func(r *Req) { r.Headers = Headers{} }), ReasonBadReq},
		{"req user without kind", req(func(r *Req) { r.User = "srt" }), ReasonBadReq},
		{"req bad kind", req(func(r *Req) { r.Kind, r.User = Kind(9), "srt" }), ReasonBadReq},
		{"req invalid UTF-8", req(func(r *Req) { r.Path = "/\xff" }), ReasonBadReq},
		{"req duplicate header", req(func(r *Req) { r.Headers = Headers{{"a", []string{"1"}}, {"a", []string{"2"}}} }), ReasonBadReq},
		{"req header without values", req(func(r *Req) { r.Headers = Headers{{"a", nil}} }), ReasonBadReq},
		{"req over MaxFrame", req(func(r *Req) { r.Query = ptr(strings.Repeat("q", MaxFrame)) }), ReasonOversized},
		{"body over MaxBody", &Body{ID: 1, Data: make([]byte, MaxBody+1)}, ReasonBadBody},
		{"refused empty", &Refused{ID: 1}, ReasonBadRefused},
		{"sync without id", &Sync{}, ReasonBadSync},
		{"allow empty setHeaders", &Allow{ID: 1, SetHeaders: Headers{}}, ReasonBadVerdict},
		{"allow empty removeHeaders", &Allow{ID: 1, RemoveHeaders: []string{}}, ReasonBadVerdict},
		{"allow duplicate setHeaders", &Allow{ID: 1, SetHeaders: Headers{{"a", nil}, {"a", nil}}}, ReasonBadVerdict},
		{"allow cred alone", &Allow{ID: 1, Cred: ptr("github")}, ReasonBadVerdict},
		{"allow set cookie", &Allow{ID: 1, SetHeaders: Headers{{"cookie", []string{"a"}}}}, ReasonBadVerdict},
		{"allow set header bytes", &Allow{ID: 1, SetHeaders: Headers{{"x", []string{strings.Repeat("v", MaxHeaderBytes)}}}}, ReasonBadVerdict},
		{"allow remove bytes", &Allow{ID: 1, RemoveHeaders: []string{strings.Repeat("x", MaxRemoveBytes+1)}}, ReasonBadVerdict},
		{"deny empty reason", &Deny{ID: 1, Status: 403, Reason: ptr("")}, ReasonBadVerdict},
		{"deny reason invalid UTF-8", &Deny{ID: 1, Status: 403, Reason: ptr("\xff")}, ReasonBadVerdict},
		{"deny status", &Deny{ID: 1, Status: 302}, ReasonBadVerdict},
		{"need_body max", &NeedBody{ID: 1, Max: MaxBody + 1}, ReasonBadVerdict},
		{"update empty dra", &Update{DeniedResolvedAddresses: []string{}}, ReasonBadUpdate},
		{"update over MaxFrame", &Update{AllowedDomains: manyNames(MaxFrame / 10)}, ReasonOversized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(tc.m)
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Reason != tc.reason || b != nil {
				t.Fatalf("Encode = %q, %v; want %q", b, err, tc.reason)
			}
		})
	}
}

func manyNames(n int) []string {
	list := make([]string, n)
	for i := range list {
		list[i] = "a" + itoa(uint64(i)) + ".example"
	}
	return list
}

func TestHeaderBytesBoundary(t *testing.T) {
	// name once plus values: "x" + 65535 bytes is exactly MaxHeaderBytes.
	at := &Allow{ID: 1, SetHeaders: Headers{{"x", []string{strings.Repeat("v", MaxHeaderBytes-1)}}}}
	b, err := Encode(at)
	if err != nil {
		t.Fatalf("at the limit: %v (%s)", err, detail(err))
	}
	if _, err := DecodeDeciderMessage(b, false); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	over := strings.Replace(string(b), `"x":["`, `"x":["v`, 1)
	if _, err := DecodeDeciderMessage([]byte(over), false); err == nil || err.Error() != ReasonBadVerdict {
		t.Fatalf("one byte over: %v", err)
	}
}

func TestBodyFullSize(t *testing.T) {
	data := bytes.Repeat([]byte{0xfb, 0xff, 0x00}, MaxBody/3+1)[:MaxBody]
	b, err := Encode(&Body{ID: MaxID, Data: data, Cut: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != MaxProxyFrame {
		t.Fatalf("a full body is %d bytes; MaxProxyFrame is %d", len(b), MaxProxyFrame)
	}
	m, err := DecodeProxyMessage(b, false)
	if err != nil {
		t.Fatalf("decode: %v (%s)", err, detail(err))
	}
	if got := m.(*Body); !bytes.Equal(got.Data, data) || !got.Cut || got.ID != MaxID {
		t.Fatal("body changed in the round trip")
	}
	if _, err := DecodeProxyMessage(append(b, ' '), false); err == nil || err.Error() != ReasonOversized {
		t.Fatalf("one byte over MaxProxyFrame: %v", err)
	}
}

func TestDecodeSizeLimits(t *testing.T) {
	big := `{"t":"verdict","id":1,"action":"deny","status":403}` + strings.Repeat(" ", MaxFrame)
	if _, err := DecodeDeciderMessage([]byte(big), false); err == nil || err.Error() != ReasonOversized {
		t.Fatalf("decider message over MaxFrame: %v", err)
	}
	req := `{"t":"req","id":1,"method":"GET","host":"h","port":80,"path":"/"}` + strings.Repeat(" ", MaxFrame)
	if _, err := DecodeProxyMessage([]byte(req), false); err == nil || err.Error() != ReasonOversized {
		t.Fatalf("req over MaxFrame: %v", err)
	}
}

func TestProtocolErrorDetail(t *testing.T) {
	_, err := DecodeDeciderMessage([]byte(`{"t":"verdict","id":1,"action":"allow","setHeaders":{"cookie":["a"]}}`), false)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Error() != ReasonBadVerdict || !strings.Contains(pe.Detail, "cookie") {
		t.Fatalf("err = %#v", err)
	}
}
