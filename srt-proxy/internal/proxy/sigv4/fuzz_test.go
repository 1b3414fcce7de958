package sigv4

import (
	"strings"
	"testing"
)

// Whatever parses prints as a header that parses to the same.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + zeroSig,
		"AWS4-HMAC-SHA256 Signature=" + zeroSig + ",SignedHeaders=content-type;host,Credential=a/b/20150830/r/s/aws4_request",
		"AWS4-ECDSA-P256-SHA256 Credential=K/20261201/s3/aws4_request, SignedHeaders=host;x-amz-region-set, Signature=3045022100ab",
		"AWS4-HMAC-SHA256 Credential=/20150830/r/s/aws4_request, SignedHeaders=host, Signature=00",
		"AWS AKID:sig", "Basic eDp5", "AWS4-HMAC-SHA256 ", "AWS4-HMAC-SHA256 Credential==,,",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a, err := ParseAuthorization(v)
		if err != nil {
			return
		}
		if a.KeyID == "" || a.Date == "" || a.Service == "" || len(a.Headers) == 0 {
			t.Fatalf("parsed with a part missing: %+v", a)
		}
		b, err := ParseAuthorization(a.String())
		if err != nil {
			t.Fatalf("%q parsed, its print %q does not: %v", v, a.String(), err)
		}
		if b.String() != a.String() || b.KeyID != a.KeyID || b.Scope != a.Scope || b.Region != a.Region {
			t.Fatalf("%+v printed and parsed again is %+v", a, b)
		}
	})
}

// A canonical query is its own canonical form, and has no '+' or raw
// reserved byte.
func FuzzCanonicalQuery(f *testing.F) {
	for _, s := range []string{"", "b=2&a=1", "a+b=%7E&&x", "%E1%88%B4=bar", "a=%zz", "k=a=b;c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := canonicalQuery(raw)
		if err != nil {
			return
		}
		again, err := canonicalQuery(q)
		if err != nil || again != q {
			t.Fatalf("%q → %q → %q, %v", raw, q, again, err)
		}
		if strings.ContainsAny(q, "+ /?#[]@!$'()*,;") {
			t.Fatalf("%q → %q", raw, q)
		}
	})
}

// Resign does not panic on any head, changes only what it may, and a
// request it signs again carries the real key id.
func FuzzResign(f *testing.F) {
	f.Add("/b/k?x=1", "x-amz-date", "20261201T180405Z", fakeAuth(s3Scope, "host;x-amz-date")[len("Authorization: "):])
	f.Add("/?"+presignedQuery, "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "")
	f.Fuzz(func(t *testing.T, target, name, value, auth string) {
		if strings.EqualFold(name, "authorization") {
			return
		}
		h := head("PUT", target, "h", amzDate)
		h.Fields = append(h.Fields, fieldOf(name, value), fieldOf("Authorization", auth))
		_, err := Resign(h, strings.NewReader("body"), pair(realKeyID, realSecret, realToken), Options{})
		if err == nil && field(t, h, "authorization") != auth && !strings.Contains(field(t, h, "authorization"), "Credential="+realKeyID+"/") {
			t.Fatalf("changed, not to the real key: %q", field(t, h, "authorization"))
		}
	})
}
