package sigv4

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// The real pair of the SDK tests.
const (
	realKeyID  = "AKIAIOSFODNN7REALKEY"
	realSecret = "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"
)

// sdkCase is a request an AWS SDK client would sign: the SDK's own signer
// signs it with the sentinels, Resign signs it again, and the SDK's signer,
// given the real pair, must find the same signature in what goes upstream.
type sdkCase struct {
	name    string
	method  string
	url     string
	service string
	header  []string // "Name: value", added in order
	body    string
	chunked bool   // no Content-Length: the body's length is unknown
	payload string // the payload hash the client signs; "": none sent, the body's
	token   bool   // the pair has a session token
}

func TestResignVerifiedBySDK(t *testing.T) {
	for _, c := range []sdkCase{
		{name: "s3 put, hashed body, session token, metadata", method: "PUT", service: "s3",
			url:    "https://bucket.s3.us-west-2.amazonaws.com/dir/a%20b+c$(%C3%A9)!'*.txt",
			header: []string{"Content-Type: text/plain", "X-Amz-Meta-Note:   two   spaces  ", "X-Amz-Meta-List: a", "X-Amz-Meta-List: b"},
			body:   "hello, world\n", payload: "hash", token: true},
		{name: "s3 list, query to sort and encode", method: "GET", service: "s3",
			url:     "https://bucket.s3.us-west-2.amazonaws.com/?list-type=2&prefix=a%2Fb%20c&delimiter=%2F&continuation-token=x%2By%3D&fetch-owner",
			payload: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", token: true},
		{name: "s3 unsigned payload", method: "PUT", service: "s3", url: "https://127.0.0.1:9000/bucket/key",
			body: strings.Repeat("x", 1000), payload: "UNSIGNED-PAYLOAD"},
		{name: "s3 unsigned streaming with a trailer", method: "PUT", service: "s3", url: "https://127.0.0.1:9000/bucket/k",
			header: []string{"X-Amz-Trailer: x-amz-checksum-crc32", "X-Amz-Decoded-Content-Length: 5", "Content-Encoding: aws-chunked"},
			body:   "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n", payload: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"},
		{name: "sts form post, body hashed by the proxy", method: "POST", service: "sts", url: "https://sts.amazonaws.com/",
			header: []string{"Content-Type: application/x-www-form-urlencoded; charset=utf-8"},
			body:   "Action=GetCallerIdentity&Version=2011-06-15", token: true},
		{name: "lambda invoke, path encoded twice", method: "POST", service: "lambda",
			url:    "https://lambda.us-east-1.amazonaws.com/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Af/invocations?Qualifier=%24LATEST",
			header: []string{"X-Amz-Invocation-Type: RequestResponse"}, body: `{"k":"v"}`},
		{name: "chunked body hashed", method: "POST", service: "execute-api", url: "https://abc.execute-api.eu-west-1.amazonaws.com/prod/items",
			body: strings.Repeat("chunk ", 5000), chunked: true},
		{name: "sentinel in a signed header", method: "PUT", service: "s3", url: "https://bucket.s3.amazonaws.com/k",
			header: []string{"X-Amz-Meta-Token: <" + fakeToken + ">"}, payload: "UNSIGNED-PAYLOAD", token: true},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

var signedAt = time.Date(2026, 12, 1, 18, 4, 5, 0, time.UTC)

func (c sdkCase) region() string {
	if i := strings.Index(c.url, ".s3."); i >= 0 {
		if r, _, ok := strings.Cut(c.url[i+4:], ".amazonaws"); ok {
			return r
		}
	}
	return "us-east-1"
}

// payloadHash is the hash the client signs, and the x-amz-content-sha256 it sends ("" for none).
func (c sdkCase) payloadHash() (signed, header string) {
	sum := sha256.Sum256([]byte(c.body))
	switch c.payload {
	case "":
		return hex.EncodeToString(sum[:]), ""
	case "hash":
		return hex.EncodeToString(sum[:]), hex.EncodeToString(sum[:])
	}
	return c.payload, c.payload
}

// request is the request before signing.
func (c sdkCase) request(t *testing.T) *http.Request {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r, err := http.NewRequest(c.method, c.url, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.chunked {
		r.ContentLength = -1
	}
	for _, l := range c.header {
		name, value, _ := strings.Cut(l, ":")
		r.Header.Add(name, strings.TrimLeft(value, " "))
	}
	if _, h := c.payloadHash(); h != "" {
		r.Header.Set("X-Amz-Content-Sha256", h)
	}
	return r
}

func (c sdkCase) sign(t *testing.T, r *http.Request, key, secret, token string) {
	t.Helper()
	hash, _ := c.payloadHash()
	creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, SessionToken: token}
	err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hash, c.service, c.region(), signedAt,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = singleEncoded[c.service] })
	if err != nil {
		t.Fatal(err)
	}
}

// wire is r as net/http writes it, read back as srt-proxy reads a request:
// its head (http1.ReadHead) and its body (http1.RequestBody, chunks
// decoded).
func wire(t *testing.T, r *http.Request) (Head, io.Reader) {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(&b)
	rh, err := http1.ReadHead(br, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	kind, n, err := http1.Framing(rh)
	if err != nil {
		t.Fatal(err)
	}
	hosts := rh.Values("host")
	if len(hosts) != 1 {
		t.Fatalf("Host %v", hosts)
	}
	h := Head{Method: rh.Method, Target: rh.Target, Host: hosts[0], Fields: rh.Fields}
	if kind == http1.BodyNone {
		return h, nil
	}
	return h, http1.NewRequestBody(kind, n, br, nil)
}

func (c sdkCase) check(t *testing.T) {
	fakeTok, realTok := "", ""
	if c.token {
		fakeTok, realTok = fakeToken, realToken
	}
	client := c.request(t)
	c.sign(t, client, fakeKeyID, fakeSecret, fakeTok)
	h, received := wire(t, client)
	if c.chunked != (field(t, h, "transfer-encoding") == "chunked") {
		t.Fatalf("Transfer-Encoding %q", field(t, h, "transfer-encoding"))
	}
	before := field(t, h, "authorization")
	if !strings.Contains(before, "Credential="+fakeKeyID+"/") {
		t.Fatalf("the client did not sign with the sentinel: %s", before)
	}
	sent, err := Resign(h, received, pair(realKeyID, realSecret, realTok), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	if sent != nil {
		body, _ = io.ReadAll(sent)
	}
	if string(body) != c.body {
		t.Fatalf("body changed: %q", body)
	}
	if tok := field(t, h, "x-amz-security-token"); tok != realTok {
		t.Fatalf("x-amz-security-token %q, want the real token", tok)
	}
	// The verifier: the request as the upstream receives it, signed by the
	// SDK with the real pair at the same time.
	verify := c.upstream(t, h, body)
	c.sign(t, verify, realKeyID, realSecret, realTok)
	got, want := field(t, h, "authorization"), verify.Header.Get("Authorization")
	if got != want {
		t.Fatalf("re-signed:\n got %s\nwant %s (the SDK's, with the real key)", got, want)
	}
	if got == before || !strings.Contains(got, "Credential="+realKeyID+"/") {
		t.Fatalf("not signed again: %s", got)
	}
}

// upstream is the request the re-signed head and body make, as a server
// reads it, without what the SDK signer sets itself.
func (c sdkCase) upstream(t *testing.T, h Head, body []byte) *http.Request {
	r, err := http.NewRequest(h.Method, "https://"+h.Host+h.Target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.chunked {
		r.ContentLength = -1
	}
	for _, f := range h.Fields {
		switch f.Lower {
		case "host", "content-length", "transfer-encoding", "authorization", "x-amz-date", "x-amz-security-token":
			continue
		}
		r.Header.Add(f.Name, f.Value)
	}
	return r
}
