package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/srt-sandbox/decider/protocol"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// TestInjectSigV4: an AWS request the client signed with a masked key
// pair reaches the upstream signed again with the real pair: the SDK's
// own signer, given the real pair and the same time, finds the same
// signature (verified against aws-sdk-go-v2, not against sigv4's code).
func TestInjectSigV4(t *testing.T) {
	const realKeyID, realSecret = "AKIAIOSFODNN7REALKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYREALSECRET"
	keyID := ask.Mask{ID: "cmd1.3", Sentinel: "fake_value_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", Value: realKeyID, AWSPair: "default", AWSRole: protocol.AWSAccessKeyID}
	secret := ask.Mask{ID: "cmd1.4", Sentinel: "fake_value_1f2e3d4c-5b6a-4978-8a6b-5c4d3e2f1a0b", Value: realSecret, AWSPair: "default", AWSRole: protocol.AWSSecretAccessKey}
	rc := &recorder{}
	f := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(keyID, secret)})
	url := fmt.Sprintf("https://echo.test:%d/", f.port)
	body := "Action=GetCallerIdentity&Version=2011-06-15"
	at := time.Now().UTC().Truncate(time.Second)
	sign := func(r *http.Request, key, secret string) {
		t.Helper()
		sum := sha256.Sum256([]byte(body))
		if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret},
			r, hex.EncodeToString(sum[:]), "sts", "us-east-1", at); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sign(req, keyID.Sentinel, secret.Sentinel)
	resp, err := f.client(f.pool).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := rc.last(t)
	verify, _ := http.NewRequest("POST", url, strings.NewReader(got.body))
	verify.Header.Set("Content-Type", got.header.Get("Content-Type"))
	sign(verify, realKeyID, realSecret)
	if a, want := got.header.Get("Authorization"), verify.Header.Get("Authorization"); a != want || got.body != body {
		t.Fatalf("the upstream received\n%s\nthe SDK signs with the real pair\n%s\n(body %q)", a, want, got.body)
	}
	// A presigned URL cannot be signed again: refused, with the setting
	// that would let it pass, and nothing forwarded.
	n := len(rc.seen)
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp2, text := do(t, tc, br, "GET /k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="+keyID.Sentinel+
		"%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261201T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=00 HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	if resp2.StatusCode != 403 || !strings.HasPrefix(text, "sigv4: a presigned request") || !strings.Contains(text, "--sigv4-presigned passthrough") {
		t.Fatalf("a presigned request: %d %q", resp2.StatusCode, text)
	}
	if len(rc.seen) != n {
		t.Fatal("a refused presigned request was forwarded")
	}
}

// TestInjectSigV4Passthrough: with its sigv4 setting "passthrough", a
// streaming upload signed with the masked key goes upstream as the client
// signed it: its Authorization (the masked key id), its session token's
// sentinel and its body unchanged, though the allow names their masks.
func TestInjectSigV4Passthrough(t *testing.T) {
	keyID := ask.Mask{ID: "c.1", Sentinel: "fake_value_9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", Value: "AKIAIOSFODNN7REALKEY", AWSPair: "p", AWSRole: protocol.AWSAccessKeyID}
	secret := ask.Mask{ID: "c.2", Sentinel: "fake_value_1f2e3d4c-5b6a-4978-8a6b-5c4d3e2f1a0b", Value: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYREALSECRET", AWSPair: "p", AWSRole: protocol.AWSSecretAccessKey}
	token := ask.Mask{ID: "c.3", Sentinel: "fake_value_0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", Value: "REALSESSIONTOKEN", AWSPair: "p", AWSRole: protocol.AWSSessionToken}
	rc := &recorder{}
	f := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(keyID, secret, token),
		server: func(s *Server) { s.Rules.SigV4Streaming = rules.SigV4Passthrough }})
	auth := "AWS4-HMAC-SHA256 Credential=" + keyID.Sentinel + "/20261201/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=" + strings.Repeat("0", 64)
	body := "5;chunk-signature=" + strings.Repeat("0", 64) + "\r\n" + token.Sentinel[:5] + "\r\n"
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp, _ := do(t, tc, br, "PUT /b/k HTTP/1.1\r\nHost: echo.test\r\nAuthorization: "+auth+"\r\nX-Amz-Date: 20261201T000000Z\r\n"+
		"X-Amz-Content-Sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD\r\nX-Amz-Security-Token: "+token.Sentinel+"\r\nContent-Length: "+fmt.Sprint(len(body))+"\r\n\r\n"+body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := rc.last(t)
	if got.header.Get("Authorization") != auth || got.header.Get("X-Amz-Security-Token") != token.Sentinel || got.body != body {
		t.Fatalf("the upstream received Authorization %q, token %q, body %q; want them as the client sent them", got.header.Get("Authorization"), got.header.Get("X-Amz-Security-Token"), got.body)
	}
}
