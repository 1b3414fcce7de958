package sigv4

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// The masked pair of the tests: the sandboxed client holds the sentinels,
// the proxy the values.
const (
	fakeKeyID  = "fake_value_0b7c2f1e-9a4d-4c36-8e21-5f0d3a6b7c81"
	fakeSecret = "fake_value_6d1e8f20-3b47-4a95-b1c2-7e9f0a4d5c63_pad_to_forty"
	fakeToken  = "fake_value_a3c4e5f6-0718-4293-a4b5-c6d7e8f90a1b"
	realToken  = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD"
	zeroSig    = "0000000000000000000000000000000000000000000000000000000000000000"
)

// pair is a masked AWS pair as the decider names it for a request.
func pair(keyID, secret, token string) []ask.Mask {
	m := []ask.Mask{
		{ID: "c.1", Sentinel: fakeKeyID, Value: keyID, AWSPair: "default", AWSRole: "accessKeyId"},
		{ID: "c.2", Sentinel: fakeSecret, Value: secret, AWSPair: "default", AWSRole: "secretAccessKey"},
	}
	if token != "" {
		m = append(m, ask.Mask{ID: "c.3", Sentinel: fakeToken, Value: token, AWSPair: "default", AWSRole: "sessionToken"})
	}
	return m
}

// head builds a Head; fields are "Name: value" lines in order.
func head(method, target, host string, fields ...string) Head {
	h := Head{Method: method, Target: target, Host: host}
	for _, l := range fields {
		name, value, _ := strings.Cut(l, ":")
		h.Fields = append(h.Fields, http1.Field{Name: name, Value: strings.Trim(value, " \t"), Lower: hostname.LowerASCII(name)})
	}
	return h
}

// fakeAuth is an Authorization header as a client holding the sentinel
// key id writes it (its signature does not matter to Resign).
func fakeAuth(scope, signed string) string {
	return "Authorization: AWS4-HMAC-SHA256 Credential=" + fakeKeyID + "/" + scope + ", SignedHeaders=" + signed + ", Signature=" + zeroSig
}

// field is the only value of a field; "" when absent, fails when more.
func field(t *testing.T, h Head, lower string) string {
	t.Helper()
	v := h.values(lower)
	switch len(v) {
	case 0:
		return ""
	case 1:
		return v[0]
	}
	t.Fatalf("%d %s fields", len(v), lower)
	return ""
}

func fieldOf(name, value string) http1.Field {
	return http1.Field{Name: name, Value: value, Lower: hostname.LowerASCII(name)}
}
