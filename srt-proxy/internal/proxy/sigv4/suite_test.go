package sigv4

import (
	"io"
	"strings"
	"testing"
)

// The published vectors: AWS's SigV4 test suite (credentials AKIDEXAMPLE,
// service "service", 20150830T123600Z) and the S3 API reference's
// "Signature Calculations for the Authorization Header" examples. Each
// request is signed by a client with the masked key; Resign must produce
// exactly the Authorization AWS published for the real one.
//
// Left out: get-utf8 and get-space, whose request lines carry raw UTF-8
// and a raw space (not valid on the wire; the suite encodes them once,
// where a path that arrives encoded is encoded twice), the normalize-path
// vectors (TestCanonicalURI has their rule), and the query vectors whose
// request line is not valid HTTP either (post-vanilla-query-nonunreserved).
func TestSuiteVectors(t *testing.T) {
	const (
		suiteKey    = "AKIDEXAMPLE"
		suiteSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
		s3Key       = "AKIAIOSFODNN7EXAMPLE"
		s3Secret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
		suiteScope  = "20150830/us-east-1/service/aws4_request"
		s3Scope     = "20130524/us-east-1/s3/aws4_request"
		suiteDate   = "X-Amz-Date: 20150830T123600Z"
		s3Date      = "X-Amz-Date: 20130524T000000Z"
		empty       = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		suiteHost   = "example.amazonaws.com"
		s3Host      = "examplebucket.s3.amazonaws.com"
	)
	for _, c := range []struct {
		name           string
		method, target string
		host           string
		s3             bool
		signed         string
		fields         []string
		body           string
		sig            string
	}{
		{"get-vanilla", "GET", "/", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"get-vanilla-query-order-key-case", "GET", "/?Param2=value2&Param1=value1", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
		{"get-vanilla-query-unreserved", "GET", "/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
			suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"},
		{"get-vanilla-utf8-query", "GET", "/?%E1%88%B4=bar", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"},
		{"get-vanilla-empty-query-key", "GET", "/?Param1=value1", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"},
		{"get-unreserved", "GET", "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"},
		{"get-header-key-duplicate", "GET", "/", suiteHost, false, "host;my-header1;x-amz-date",
			[]string{"My-Header1: value2", "My-Header1: value2", "My-Header1: value1", suiteDate}, "",
			"c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"},
		{"get-header-value-order", "GET", "/", suiteHost, false, "host;my-header1;x-amz-date",
			[]string{"My-Header1: value4", "My-Header1: value1", "My-Header1: value3", "My-Header1: value2", suiteDate}, "",
			"08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"},
		{"get-header-value-trim", "GET", "/", suiteHost, false, "host;my-header1;my-header2;x-amz-date",
			[]string{"My-Header1:  value1", `My-Header2:  "a   b   c"`, suiteDate}, "",
			"acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
		{"post-vanilla", "POST", "/", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
		{"post-vanilla-query", "POST", "/?Param1=value1", suiteHost, false, "host;x-amz-date", []string{suiteDate}, "",
			"28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
		{"post-header-key-sort", "POST", "/", suiteHost, false, "host;my-header1;x-amz-date", []string{suiteDate, "My-Header1: value1"}, "",
			"c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
		{"post-header-value-case", "POST", "/", suiteHost, false, "host;my-header1;x-amz-date", []string{"My-Header1: VALUE1", suiteDate}, "",
			"cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
		{"post-x-www-form-urlencoded", "POST", "/", suiteHost, false, "content-type;host;x-amz-date",
			[]string{"Content-Type: application/x-www-form-urlencoded", suiteDate}, "Param1=value1",
			"ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
		{"post-x-www-form-urlencoded-parameters", "POST", "/", suiteHost, false, "content-type;host;x-amz-date",
			[]string{"Content-Type: application/x-www-form-urlencoded; charset=utf8", suiteDate}, "Param1=value1",
			"1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe"},
		{"s3 GET Object", "GET", "/test.txt", s3Host, true, "host;range;x-amz-content-sha256;x-amz-date",
			[]string{"Range: bytes=0-9", "x-amz-content-sha256: " + empty, s3Date}, "",
			"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
		{"s3 PUT Object", "PUT", "/test%24file.text", s3Host, true, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
			[]string{"Date: Fri, 24 May 2013 00:00:00 GMT", s3Date, "x-amz-storage-class: REDUCED_REDUNDANCY",
				"x-amz-content-sha256: 44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"}, "Welcome to Amazon S3.",
			"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"},
		{"s3 GET Bucket Lifecycle", "GET", "/?lifecycle", s3Host, true, "host;x-amz-content-sha256;x-amz-date",
			[]string{"x-amz-content-sha256: " + empty, s3Date}, "",
			"fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"},
		{"s3 GET Bucket (List Objects)", "GET", "/?max-keys=2&prefix=J", s3Host, true, "host;x-amz-content-sha256;x-amz-date",
			[]string{"x-amz-content-sha256: " + empty, s3Date}, "",
			"34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key, secret, scope := suiteKey, suiteSecret, suiteScope
			if c.s3 {
				key, secret, scope = s3Key, s3Secret, s3Scope
			}
			h := head(c.method, c.target, c.host, append(c.fields, fakeAuth(scope, c.signed))...)
			body, err := Resign(h, strings.NewReader(c.body), pair(key, secret, ""), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := "AWS4-HMAC-SHA256 Credential=" + key + "/" + scope + ", SignedHeaders=" + c.signed + ", Signature=" + c.sig
			if got := field(t, h, "authorization"); got != want {
				t.Errorf("Authorization:\n got %s\nwant %s", got, want)
			}
			if sent, _ := io.ReadAll(body); string(sent) != c.body {
				t.Errorf("body %q, want %q", sent, c.body)
			}
		})
	}
}
