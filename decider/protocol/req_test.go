package protocol

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateReq(t *testing.T) {
	base := func(edit func(r *Req)) *Req {
		r := &Req{Method: "GET", Host: "example.com", Port: 80, Path: "/"}
		if edit != nil {
			edit(r)
		}
		return r
	}
	many := func(n int) Headers {
		h := make(Headers, n)
		for i := range h {
			h[i] = Header{"x-" + itoa(uint64(i)), []string{"v"}}
		}
		return h
	}
	cases := []struct {
		name string
		r    *Req
		want string // "" = may be asked
	}{
		{"plain", base(nil), ""},
		{"id is not looked at", base(func(r *Req) { r.ID = 0 }), ""},
		{"190 values", base(func(r *Req) { r.Headers = many(190) }), ""},
		{"191 values", base(func(r *Req) { r.Headers = many(191) }), RefuseHeadersTooLarge},
		{"64 KiB of headers", base(func(r *Req) { r.Headers = Headers{{"x", []string{strings.Repeat("v", MaxHeaderBytes-1)}}} }), ""},
		{"over 64 KiB of headers", base(func(r *Req) { r.Headers = Headers{{"x", []string{strings.Repeat("v", MaxHeaderBytes)}}} }), RefuseHeadersTooLarge},
		{"header name not token", base(func(r *Req) { r.Headers = Headers{{"a b", []string{"1"}}} }), RefuseBadHeader},
		{"header name upper-case", base(func(r *Req) { r.Headers = Headers{{"A", []string{"1"}}} }), RefuseBadHeader},
		{"header value control", base(func(r *Req) { r.Headers = Headers{{"a", []string{"\x01"}}} }), RefuseBadHeader},
		{"header value C1", base(func(r *Req) { r.Headers = Headers{{"a", []string{"\u0085"}}} }), RefuseBadHeader},
		{"header value invalid UTF-8", base(func(r *Req) { r.Headers = Headers{{"a", []string{"\xff"}}} }), RefuseBadHeader},
		{"host in headers", base(func(r *Req) { r.Headers = Headers{{"host", []string{"h"}}} }), RefuseBadHeader},
		{"empty Host header", base(func(r *Req) { r.HostHeader = ptr("") }), RefuseBadHeader},
		{"Host header control", base(func(r *Req) { r.HostHeader = ptr("h\n") }), RefuseBadHeader},
		{"bad header beats size", base(func(r *Req) { r.Headers = append(many(200), Header{"a b", []string{"1"}}) }), RefuseBadHeader},
		{"empty method", base(func(r *Req) { r.Method = "" }), RefuseBadRequest},
		{"empty host", base(func(r *Req) { r.Host = "" }), RefuseBadRequest},
		{"empty path", base(func(r *Req) { r.Path = "" }), RefuseBadRequest},
		{"port 0", base(func(r *Req) { r.Port = 0 }), RefuseBadRequest},
		{"port 65536", base(func(r *Req) { r.Port = 65536 }), RefuseBadRequest},
		{"size beats emptiness", base(func(r *Req) { r.Method = ""; r.Headers = many(191) }), RefuseHeadersTooLarge},
		{"host 8 KiB", base(func(r *Req) { r.Host = strings.Repeat("a", MaxTarget) }), ""},
		{"host over 8 KiB", base(func(r *Req) { r.Host = strings.Repeat("a", MaxTarget+1) }), RefuseTargetTooLarge},
		{"Host header over 8 KiB", base(func(r *Req) { r.HostHeader = ptr(strings.Repeat("a", MaxTarget+1)) }), RefuseTargetTooLarge},
		{"sni over 8 KiB", base(func(r *Req) { r.SNI = ptr(strings.Repeat("a", MaxTarget+1)) }), RefuseTargetTooLarge},
		{"path over 8 KiB", base(func(r *Req) { r.Path = "/" + strings.Repeat("a", MaxTarget) }), RefuseTargetTooLarge},
		{"emptiness beats target size", base(func(r *Req) { r.Method = ""; r.Path = strings.Repeat("a", MaxTarget+1) }), RefuseBadRequest},
		{"method not token", base(func(r *Req) { r.Method = "G(T" }), RefuseBadRequest},
		{"host upper-case", base(func(r *Req) { r.Host = "Example.com" }), RefuseBadRequest},
		{"path control", base(func(r *Req) { r.Path = "/\t" }), RefuseBadRequest},
		{"path invalid UTF-8", base(func(r *Req) { r.Path = "/\xed\xa0\x80" }), RefuseBadRequest},
		{"query control", base(func(r *Req) { r.Query = ptr("a\x7f") }), RefuseBadRequest},
		{"empty sni", base(func(r *Req) { r.SNI = ptr("") }), RefuseBadRequest},
		{"socks with headers", base(func(r *Req) {
			r.Method, r.Path, r.Kind, r.User, r.Headers = "CONNECT", "*", KindSOCKS, "srt", many(1)
		}), RefuseBadRequest},
		{"user control", base(func(r *Req) { r.Kind, r.User = KindHTTP, "srt\x00" }), RefuseBadRequest},
		{"query fits", base(func(r *Req) { r.Query = ptr(strings.Repeat("q", MaxFrame-200)) }), ""},
		{"query too large", base(func(r *Req) { r.Query = ptr(strings.Repeat("q", MaxFrame)) }), RefuseTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateReq(tc.r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ValidateReq = %v", err)
				}
				r := *tc.r
				r.ID = MaxID
				if _, err := Encode(&r); err != nil {
					t.Fatalf("a req that may be asked does not encode at MaxID: %v (%s)", err, detail(err))
				}
				return
			}
			var ue *UnaskableError
			if !errors.As(err, &ue) || ue.Reason != tc.want {
				t.Fatalf("ValidateReq = %v; want %q", err, tc.want)
			}
		})
	}
}

// The whole-req limit is judged at the largest id: a req that fits at id 1
// but not at MaxID is refused.
func TestValidateReqAtMaxID(t *testing.T) {
	r := &Req{ID: 1, Method: "GET", Host: "h", Port: 80, Path: "/"}
	small, _ := Encode(r)
	pad := MaxFrame - len(small) - len(`,"query":""`) // id 1 → exactly MaxFrame
	r.Query = ptr(strings.Repeat("q", pad))
	if b, err := Encode(r); err != nil || len(b) != MaxFrame {
		t.Fatalf("at id 1: %d bytes, %v", len(b), err)
	}
	var ue *UnaskableError
	if err := ValidateReq(r); !errors.As(err, &ue) || ue.Reason != RefuseTooLarge {
		t.Fatalf("ValidateReq = %v; want %q", err, RefuseTooLarge)
	}
	r.Query = ptr(strings.Repeat("q", pad-len(itoa(MaxID))+1))
	if err := ValidateReq(r); err != nil {
		t.Fatalf("fits at MaxID: %v", err)
	}
}

func TestCollectHeaders(t *testing.T) {
	host, h, err := CollectHeaders([]HeaderField{
		{"User-Agent", "curl"}, {"Host", "example.com"}, {"X-A", "1"}, {"accept", "*/*"}, {"x-a", "2"},
	})
	if err != nil || host == nil || *host != "example.com" {
		t.Fatalf("host %v, err %v", host, err)
	}
	want := Headers{{"user-agent", []string{"curl"}}, {"x-a", []string{"1", "2"}}, {"accept", []string{"*/*"}}}
	if len(h) != len(want) {
		t.Fatalf("headers %q", h)
	}
	for i := range want {
		if h[i].Name != want[i].Name || strings.Join(h[i].Values, "|") != strings.Join(want[i].Values, "|") {
			t.Fatalf("headers %q; want %q", h, want)
		}
	}
	if host, h, err := CollectHeaders(nil); host != nil || h != nil || err != nil {
		t.Fatalf("no headers: %v %v %v", host, h, err)
	}
	for _, tc := range []struct {
		name   string
		fields []HeaderField
		want   string
	}{
		{"two Host headers", []HeaderField{{"Host", "a"}, {"host", "a"}}, RefuseTwoHostHeaders},
		{"bad name", []HeaderField{{"a:b", "1"}}, RefuseBadHeader},
		{"bad value", []HeaderField{{"a", "\r"}}, RefuseBadHeader},
		{"bad header beats two Hosts", []HeaderField{{"Host", "a"}, {"Host", "b"}, {"x", "\x00"}}, RefuseBadHeader},
	} {
		var ue *UnaskableError
		if _, _, err := CollectHeaders(tc.fields); !errors.As(err, &ue) || ue.Reason != tc.want {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
