package sigv4

import (
	"strings"
	"testing"
)

// The path rule: encoded again and normalized for every service but S3's.
// (The SDK test has no dot segments: the Go SDK does not normalize; AWS's
// documentation, botocore and the Java SDK do.)
func TestCanonicalURI(t *testing.T) {
	for _, c := range []struct{ path, service, want string }{
		{"", "service", "/"},
		{"/", "service", "/"},
		{"/example/..", "service", "/"},                         // get-relative
		{"/example1/example2/../..", "service", "/"},            // get-relative-relative
		{"/example/.", "service", "/example"},                   // get-slash-dot-slash's kin
		{"/./", "service", "/"},                                 // get-slash-dot-slash
		{"//example//", "service", "/example/"},                 // get-slashes
		{"/example/./example1", "service", "/example/example1"}, // get-slash-pointless-dot
		{"/a%20b/%E1%88%B4", "service", "/a%2520b/%25E1%2588%25B4"},
		{"/a b$!", "service", "/a%20b%24%21"},
		{"/a%20b//./x/../", "s3", "/a%20b//./x/../"},
		{"/k%2Fey", "s3express", "/k%2Fey"},
	} {
		if got := canonicalURI(c.path, c.service); got != c.want {
			t.Errorf("canonicalURI(%q, %s) = %q, want %q", c.path, c.service, got, c.want)
		}
	}
}

func TestCanonicalQuery(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"", ""},
		{"b=2&a=1", "a=1&b=2"},
		{"a=2&a=1&a", "a=&a=1&a=2"},
		{"a+b=c+d&x=%7e%2f", "a%20b=c%20d&x=~%2F"},
		{"a-b=1&a=2&a.b=3", "a=2&a-b=1&a.b=3"},
		{"&&a=1&", "a=1"},
		{"%E1%88%B4=bar", "%E1%88%B4=bar"},
		{"k=a=b", "k=a%3Db"},
	} {
		got, err := canonicalQuery(c.raw)
		if err != nil || got != c.want {
			t.Errorf("canonicalQuery(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{"a=%", "a=%2", "%zz=1"} {
		if _, err := canonicalQuery(bad); err != errQueryEscape {
			t.Errorf("canonicalQuery(%q): %v", bad, err)
		}
	}
}

func TestCanonicalValue(t *testing.T) {
	for in, want := range map[string]string{
		"  a   b  c ": "a b c",
		"a\tb":        "a\tb",
		"":            "",
		"   ":         "",
	} {
		if got := canonicalValue(in); got != want {
			t.Errorf("canonicalValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseAuthorization(t *testing.T) {
	a, err := ParseAuthorization("AWS4-HMAC-SHA256 Signature=" + zeroSig + ",SignedHeaders=host;x-amz-date,  Credential=fake/key/with/slashes/20261201/eu-west-1/sts/aws4_request")
	if err != nil {
		t.Fatal(err)
	}
	if a.KeyID != "fake/key/with/slashes" || a.Date != "20261201" || a.Region != "eu-west-1" || a.Service != "sts" || a.SignedHeaders != "host;x-amz-date" {
		t.Fatalf("%+v", a)
	}
	a, err = ParseAuthorization("AWS4-ECDSA-P256-SHA256 Credential=K/20261201/s3/aws4_request, SignedHeaders=host, Signature=30450221")
	if err != nil || a.KeyID != "K" || a.Region != "" || a.Service != "s3" {
		t.Fatalf("sigv4a: %+v %v", a, err)
	}
	for v, want := range map[string]string{
		"Basic eDp5": errNotSigV4.Error(),
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=host, Signature=" + zeroSig + ", Extra=1":     `unknown component "Extra" in the Authorization header`,
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=host, Signature=" + zeroSig + ", Signature=1": "Signature twice in the Authorization header",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=host, Signature=abc":                          "the Authorization header's Signature is not hex",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4, SignedHeaders=host, Signature=" + zeroSig:                           "the Authorization header's Credential is not <key id>/<scope>/aws4_request",
		"AWS4-HMAC-SHA256 Credential=K/2026120/r/s/aws4_request, SignedHeaders=host, Signature=" + zeroSig:                    "the Authorization header's Credential is not <key id>/<date>/<region>/<service>/aws4_request",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=x-amz-date;host, Signature=" + zeroSig:        "the Authorization header's SignedHeaders is not sorted",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=Host, Signature=" + zeroSig:                   "the Authorization header's SignedHeaders is not a list of lower-case header names",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request, SignedHeaders=x-amz-date, Signature=" + zeroSig:             "the Authorization header's SignedHeaders does not include host",
		"AWS4-HMAC-SHA256 Credential=K/20261201/r/s/aws4_request SignedHeaders=host":                                          "the Authorization header lacks Credential, SignedHeaders or Signature",
	} {
		if _, err := ParseAuthorization(v); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", v, err, want)
		}
	}
}

// A request signed again is signed with the real key: Resign leaves it as
// it is the second time.
func TestResignOnce(t *testing.T) {
	h := head("GET", "/", "h", amzDate, emptySH, "X-Amz-Security-Token: "+fakeToken, fakeAuth(s3Scope, "host;x-amz-content-sha256;x-amz-date;x-amz-security-token"))
	masks := pair(realKeyID, realSecret, realToken)
	if _, err := Resign(h, nil, masks, Options{}); err != nil {
		t.Fatal(err)
	}
	first := field(t, h, "authorization")
	if _, err := Resign(h, nil, masks, Options{}); err != nil || field(t, h, "authorization") != first {
		t.Fatalf("signed twice: %v", err)
	}
	if !strings.HasPrefix(first, "AWS4-HMAC-SHA256 Credential="+realKeyID+"/"+s3Scope+", SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=") ||
		field(t, h, "x-amz-security-token") != realToken {
		t.Fatalf("%s", first)
	}
}
