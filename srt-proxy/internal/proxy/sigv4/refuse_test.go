package sigv4

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

const (
	s3Scope = "20261201/us-east-1/s3/aws4_request"
	amzDate = "X-Amz-Date: 20261201T180405Z"
	emptySH = "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// presignedQuery is a presigned URL's query made with the masked key.
	presignedQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + fakeKeyID + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261201T180405Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=" + zeroSig
)

// Each variant Resign cannot sign again, refused with its exact reason, or
// forwarded unchanged when its setting is passthrough.
func TestRefusedVariants(t *testing.T) {
	sigv4a := "Authorization: AWS4-ECDSA-P256-SHA256 Credential=" + fakeKeyID + "/20261201/s3/aws4_request, SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100ab"
	for _, c := range []struct {
		name    string
		h       Head
		variant Variant
		pass    Options
		reason  string
	}{
		{"streaming", head("PUT", "/b/k", "s3.amazonaws.com", amzDate, "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
			fakeAuth(s3Scope, "host;x-amz-content-sha256;x-amz-date")), VariantStreaming, Options{Streaming: Passthrough},
			`sigv4: a streaming upload (x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.streaming to "passthrough" (srt-proxy --sigv4-streaming passthrough) to forward such requests unchanged`},
		{"streaming with a signed trailer", head("PUT", "/b/k", "s3.amazonaws.com", amzDate, "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
			fakeAuth(s3Scope, "host;x-amz-content-sha256;x-amz-date")), VariantStreaming, Options{Streaming: Passthrough},
			`sigv4: a streaming upload (x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.streaming to "passthrough" (srt-proxy --sigv4-streaming passthrough) to forward such requests unchanged`},
		{"streaming, odd name", head("PUT", "/b/k", "s3.amazonaws.com", amzDate, "x-amz-content-sha256: STREAMING-<x>",
			fakeAuth(s3Scope, "host;x-amz-content-sha256;x-amz-date")), VariantStreaming, Options{Streaming: Passthrough},
			`sigv4: a streaming upload (x-amz-content-sha256: STREAMING-…) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.streaming to "passthrough" (srt-proxy --sigv4-streaming passthrough) to forward such requests unchanged`},
		{"presigned", head("GET", "/b/k?"+presignedQuery, "s3.amazonaws.com"), VariantPresigned, Options{Presigned: Passthrough},
			`sigv4: a presigned request (X-Amz-Credential in the query) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.presigned to "passthrough" (srt-proxy --sigv4-presigned passthrough) to forward such requests unchanged`},
		{"presigned, name in another case, '+' unencoded", head("GET", "/b/k?x-amz-credential="+fakeKeyID+"/20261201/us-east-1/s3/aws4_request", "s3.amazonaws.com"),
			VariantPresigned, Options{Presigned: Passthrough},
			`sigv4: a presigned request (X-Amz-Credential in the query) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.presigned to "passthrough" (srt-proxy --sigv4-presigned passthrough) to forward such requests unchanged`},
		{"sigv4a", head("GET", "/b/k", "s3.amazonaws.com", amzDate, "X-Amz-Region-Set: *", sigv4a), VariantSigV4A, Options{SigV4A: Passthrough},
			`sigv4: a SigV4A request (AWS4-ECDSA-P256-SHA256) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.sigv4a to "passthrough" (srt-proxy --sigv4a passthrough) to forward such requests unchanged`},
		{"sigv4a presigned", head("GET", "/b/k?X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256&X-Amz-Credential="+fakeKeyID+"%2F20261201%2Fs3%2Faws4_request", "s3.amazonaws.com"),
			VariantSigV4A, Options{SigV4A: Passthrough},
			`sigv4: a SigV4A request (AWS4-ECDSA-P256-SHA256) signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4.sigv4a to "passthrough" (srt-proxy --sigv4a passthrough) to forward such requests unchanged`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.h.Fields)
			_, err := Resign(c.h, strings.NewReader("body"), pair(realKeyID, realSecret, realToken), Options{})
			var r *Refusal
			if !errors.As(err, &r) || r.Variant != c.variant || r.Reason != c.reason {
				t.Fatalf("got %#v (%v)\nwant variant %d: %s", r, err, c.variant, c.reason)
			}
			// Passthrough of this variant alone: forwarded as it is.
			body := strings.NewReader("body")
			got, err := Resign(c.h, body, pair(realKeyID, realSecret, realToken), c.pass)
			if err != nil || got != io.Reader(body) || !slices.Equal(c.h.Fields, before) {
				t.Fatalf("passthrough: %v, body %v, fields %v", err, got == io.Reader(body), c.h.Fields)
			}
			// Passthrough of the others does not let it through.
			others := Options{Streaming: Passthrough, Presigned: Passthrough, SigV4A: Passthrough}
			switch c.variant {
			case VariantStreaming:
				others.Streaming = Deny
			case VariantPresigned:
				others.Presigned = Deny
			case VariantSigV4A:
				others.SigV4A = Deny
			}
			if _, err := Resign(c.h, nil, pair(realKeyID, realSecret, realToken), others); !errors.As(err, &r) || r.Variant != c.variant {
				t.Fatalf("with the other variants passed: %v", err)
			}
		})
	}
}

// A request Resign cannot sign again: refused, saying why.
func TestUnsignable(t *testing.T) {
	auth := fakeAuth(s3Scope, "host;x-amz-content-sha256;x-amz-date")
	const prefix = "sigv4: a request signed with a masked AWS access key cannot be signed again: "
	noSecret := pair(realKeyID, realSecret, "")[:1]
	for _, c := range []struct {
		name   string
		h      Head
		masks  bool // all of the pair; else only its key id
		reason string
	}{
		{"secret not injected", head("GET", "/", "h", amzDate, emptySH, auth), false,
			"the secret access key of its pair (default) is not injected for this host"},
		{"no date", head("GET", "/", "h", emptySH, auth), true,
			"it needs one X-Amz-Date header (yyyymmddThhmmssZ) on the Credential's date"},
		{"date of another day", head("GET", "/", "h", "X-Amz-Date: 20261202T000000Z", emptySH, auth), true,
			"it needs one X-Amz-Date header (yyyymmddThhmmssZ) on the Credential's date"},
		{"two dates", head("GET", "/", "h", amzDate, amzDate, emptySH, auth), true,
			"it needs one X-Amz-Date header (yyyymmddThhmmssZ) on the Credential's date"},
		{"two payload hashes", head("GET", "/", "h", amzDate, emptySH, emptySH, auth), true,
			"more than one x-amz-content-sha256 header"},
		{"odd payload hash", head("GET", "/", "h", amzDate, "x-amz-content-sha256: abc", auth), true,
			"x-amz-content-sha256 is neither a SHA-256, UNSIGNED-PAYLOAD nor STREAMING-…"},
		{"two Authorization headers", head("GET", "/", "h", amzDate, emptySH, auth, "Authorization: Basic eDp5"), true,
			"more than one Authorization header"},
		{"malformed Authorization naming the key", head("GET", "/", "h", amzDate, emptySH,
			"Authorization: AWS4-HMAC-SHA256 Credential="+fakeKeyID+"/20261201/us-east-1/s3/aws4_request, Signature="+zeroSig), true,
			"the Authorization header lacks Credential, SignedHeaders or Signature"},
		{"bad query escape", head("GET", "/?a=%zz", "h", amzDate, emptySH, auth), true,
			"the query has a '%' that is not a percent-encoded byte"},
		{"not a path", head("GET", "*", "h", amzDate, emptySH, auth), true,
			"its request-target is not a path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			masks := pair(realKeyID, realSecret, realToken)
			if !c.masks {
				masks = noSecret
			}
			_, err := Resign(c.h, nil, masks, Options{})
			var r *Refusal
			if !errors.As(err, &r) || r.Variant != VariantUnsignable || r.Reason != prefix+c.reason {
				t.Fatalf("got %v\nwant %s", err, prefix+c.reason)
			}
		})
	}
}

// A body to hash over MaxBody is refused, announced or read.
func TestTooLarge(t *testing.T) {
	auth := fakeAuth(s3Scope, "content-length;host;x-amz-date")
	masks := pair(realKeyID, realSecret, "")
	h := head("PUT", "/k", "h", amzDate, "Content-Length: 67108865", auth)
	_, err := Resign(h, nil, masks, Options{})
	var r *Refusal
	if !errors.As(err, &r) || r.Variant != VariantTooLarge || r.Reason != WhyTooLarge {
		t.Fatalf("announced: %v", err)
	}
	chunked := func() Head {
		return head("PUT", "/k", "h", amzDate, "Transfer-Encoding: chunked", fakeAuth(s3Scope, "host;x-amz-date"))
	}
	if _, err := Resign(chunked(), io.LimitReader(zeros{}, MaxBody+1), masks, Options{}); !errors.As(err, &r) || r.Variant != VariantTooLarge {
		t.Fatalf("read: %v", err)
	}
	// MaxBody exactly is signed.
	h = chunked()
	if _, err := Resign(h, io.LimitReader(zeros{}, MaxBody), masks, Options{}); err != nil || !strings.Contains(field(t, h, "authorization"), realKeyID) {
		t.Fatalf("MaxBody: %v", err)
	}
	// A body that fails is the body's error, not a refusal.
	boom := errors.New("boom")
	if _, err := Resign(chunked(), iotest.ErrReader(boom), masks, Options{}); !errors.Is(err, boom) || errors.As(err, &r) {
		t.Fatalf("failing body: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// What is not signed with a masked key goes as it is: not a byte of it
// changed, the body not read.
func TestUntouched(t *testing.T) {
	masks := pair(realKeyID, realSecret, realToken)
	other := "Authorization: AWS4-HMAC-SHA256 Credential=AKIAOTHERKEY/" + s3Scope + ", SignedHeaders=host;x-amz-date, Signature=" + zeroSig
	for _, c := range []struct {
		name  string
		h     Head
		masks bool
	}{
		{"another key", head("GET", "/", "h", amzDate, "X-Amz-Security-Token: "+fakeToken, other), true},
		{"the sentinel inside another key", head("GET", "/", "h", amzDate,
			"Authorization: AWS4-HMAC-SHA256 Credential=x"+fakeKeyID+"/"+s3Scope+", SignedHeaders=host;x-amz-date, Signature="+zeroSig), true},
		{"not signed", head("GET", "/", "h", amzDate, "X-Api-Key: "+fakeKeyID), true},
		{"SigV2", head("GET", "/", "h", "Authorization: AWS "+fakeKeyID+":c2lnbmF0dXJl"), true},
		{"presigned with another key", head("GET", "/k?X-Amz-Credential=AKIAOTHER%2F"+strings.ReplaceAll(s3Scope, "/", "%2F"), "h"), true},
		{"no AWS mask", head("GET", "/", "h", amzDate, fakeAuth(s3Scope, "host;x-amz-date")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := masks
			if !c.masks {
				m = slices.Clone(masks)
				for i := range m {
					m[i].AWSPair, m[i].AWSRole = "", ""
				}
			}
			before := slices.Clone(c.h.Fields)
			body := iotest.ErrReader(errors.New("the body was read"))
			got, err := Resign(c.h, body, m, Options{})
			if err != nil || got != body || !slices.Equal(c.h.Fields, before) {
				t.Fatalf("touched: %v, fields %v", err, c.h.Fields)
			}
		})
	}
}

// No refusal says a real value.
func TestRefusalsSayNoSecret(t *testing.T) {
	masks := pair(realKeyID, realSecret, realToken)
	for _, h := range []Head{
		head("GET", "/", "h", amzDate, "x-amz-content-sha256: bad", fakeAuth(s3Scope, "host;x-amz-date")),
		head("GET", "/?"+presignedQuery, "h"),
		head("GET", "/", "h", "Authorization: AWS4-HMAC-SHA256 Credential="+fakeKeyID+"/x, SignedHeaders=host, Signature=00"),
	} {
		_, err := Resign(h, nil, masks, Options{})
		if err == nil {
			t.Fatalf("%v: not refused", h)
		}
		for _, secret := range []string{realKeyID, realSecret, realToken} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("refusal %q says a secret", err)
			}
		}
	}
}
