//go:build linux

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// s3Verifier answers like S3 as far as authentication goes: a request
// header-signed (SigV4) with the one key pair it knows, its payload hash
// right, and its session token the real one, gets 200; anything else 403
// with S3's error code. The signature is checked by aws-sdk-go-v2's
// signer, an implementation independent of srt-proxy's: it signs the
// request again, given the headers the client signed, and the two
// Authorization values must be equal.
type s3Verifier struct {
	keyID, secret, token string
}

var authRe = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=[0-9a-f]{64}$`)

func (v *s3Verifier) handle(r *http.Request, body string) (int, string) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return 403, "AccessDenied: no Authorization header\n"
	}
	m := authRe.FindStringSubmatch(auth)
	if m == nil {
		return 403, "AccessDenied: not a SigV4 Authorization header\n"
	}
	if m[1] != v.keyID {
		return 403, "InvalidAccessKeyId: " + m[1] + "\n"
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return 403, "AccessDenied: X-Amz-Date\n"
	}
	sum := sha256.Sum256([]byte(body))
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload && h != "UNSIGNED-PAYLOAD" {
		return 400, "XAmzContentSHA256Mismatch\n"
	} else if h != "" {
		payload = h
	}
	verify, _ := http.NewRequest(r.Method, "https://"+r.Host+r.URL.RequestURI(), nil)
	verify.Host = r.Host
	creds := aws.Credentials{AccessKeyID: v.keyID, SecretAccessKey: v.secret}
	for _, h := range strings.Split(m[5], ";") {
		switch h {
		case "host", "x-amz-date":
		case "x-amz-security-token":
			creds.SessionToken = r.Header.Get(h)
		case "content-length":
			verify.ContentLength = r.ContentLength
		default:
			verify.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	err = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).SignHTTP(context.Background(), creds, verify, payload, m[4], m[3], at)
	if err != nil || verify.Header.Get("Authorization") != auth {
		return 403, "SignatureDoesNotMatch: the SDK signs " + verify.Header.Get("Authorization") + "\n"
	}
	if r.Header.Get("X-Amz-Security-Token") != v.token {
		return 403, "InvalidToken\n"
	}
	return 200, "s3 ok " + r.Method + " " + r.URL.Path + "\n"
}

// sigv4Variants are requests signed with the masked access key id that
// srt-proxy cannot sign again, each at its own path under prefix: a
// presigned URL, a streaming upload, a SigV4A request. Each prints its
// answer's body and status.
func sigv4Variants(base, prefix string) string {
	zeros := strings.Repeat("0", 64)
	w := ` -s -w 'status=%{http_code}\n' `
	return strings.Join([]string{
		`curl` + w + `"` + base + `/` + prefix + `presigned?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=$AWS_ACCESS_KEY_ID%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261201T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=` + zeros + `"`,
		`curl` + w + `-X PUT --data-binary chunk -H "X-Amz-Date: 20261201T000000Z" -H "x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD" ` +
			`-H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/20261201/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=` + zeros + `" ` + base + `/` + prefix + `streaming`,
		`curl` + w + `-H "X-Amz-Date: 20261201T000000Z" -H "X-Amz-Region-Set: us-east-1" ` +
			`-H "Authorization: AWS4-ECDSA-P256-SHA256 Credential=$AWS_ACCESS_KEY_ID/20261201/s3/aws4_request, SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100` + zeros + `" ` + base + `/` + prefix + `sigv4a`,
	}, "\n")
}

// TestMaskAWS: the standard trio masked whole pairs itself. curl inside
// signs (its own SigV4, --aws-sigv4) with the sentinels; srt-proxy signs
// again with the real pair for the injectHosts host, where the verifier
// (aws-sdk-go-v2) accepts it, the real session token in place. The same
// request to an allowed host outside injectHosts goes as signed, with the
// fake key, and the verifier refuses it. Presigned, streaming and SigV4A
// requests are refused with their exact 403; with credentials.sigv4 set
// to "passthrough" each reaches the upstream unchanged.
func TestMaskAWS(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		v := &s3Verifier{keyID: "AKIA" + strings.ToUpper(secret("", 16)), secret: secret("wJal/+", 40), token: secret("IQoJb3JpZ2luX2VjE", 120)}
		up := startMaskUpstream(t, v.handle)
		env := []string{"AWS_ACCESS_KEY_ID=" + v.keyID, "AWS_SECRET_ACCESS_KEY=" + v.secret, "AWS_SESSION_TOKEN=" + v.token}
		cred := func(extra string) string {
			e := func(n string) string { return `{"name":"` + n + `","mode":"mask","injectHosts":["s3.test"]}` }
			return `{"envVars":[` + e("AWS_ACCESS_KEY_ID") + `,` + e("AWS_SECRET_ACCESS_KEY") + `,` + e("AWS_SESSION_TOKEN") + `]` + extra + `}`
		}
		put := func(host, path string) string {
			return `curl -sS -w 'status=%{http_code}\n' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" ` +
				`-H "x-amz-security-token: $AWS_SESSION_TOKEN" -X PUT --data-binary "object body" ` + up.https(host) + path
		}
		script := strings.Join([]string{
			`echo "KEY=$AWS_ACCESS_KEY_ID"`,
			put("s3.test", "/bucket/put"),
			`curl -sS -w 'status=%{http_code}\n' --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-security-token: $AWS_SESSION_TOKEN" "` + up.https("s3.test") + `/bucket/get?list-type=2&prefix=a"`,
			put("others3.test", "/bucket/other"),
			sigv4Variants(up.https("s3.test"), "deny-"),
		}, "\n")
		r := w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s", up.maskSettings(w, cred("")), "-c", script)
		fake := field(r.stdout, "KEY")
		refusal := func(what, setting, flag string) string {
			return "sigv4: " + what + " signed with a masked AWS access key cannot be signed again with the real key; set credentials.sigv4." + setting +
				` to "passthrough" (srt-proxy --` + flag + " passthrough) to forward such requests unchanged\nstatus=403\n"
		}
		expect(t, r, 0, "!"+v.keyID, "!"+v.secret, "!"+v.token,
			"s3 ok PUT /bucket/put\nstatus=200\n",
			"s3 ok GET /bucket/get\nstatus=200\n",
			"InvalidAccessKeyId: "+fake+"\nstatus=403\n",
			refusal("a presigned request (X-Amz-Credential in the query)", "presigned", "sigv4-presigned"),
			refusal("a streaming upload (x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD)", "streaming", "sigv4-streaming"),
			refusal("a SigV4A request (AWS4-ECDSA-P256-SHA256)", "sigv4a", "sigv4a"))
		checkSentinel(t, "$AWS_ACCESS_KEY_ID inside", fake, v.keyID)
		if got := up.request(t, "/bucket/put"); got.body != "object body" || got.header.Get("X-Amz-Security-Token") != v.token {
			t.Errorf("/bucket/put: the upstream received body %q, token %q", got.body, got.header.Get("X-Amz-Security-Token"))
		}
		if got := up.request(t, "/bucket/other"); !strings.Contains(got.header.Get("Authorization"), "Credential="+fake+"/") || got.header.Get("X-Amz-Security-Token") == v.token {
			t.Errorf("/bucket/other (not in injectHosts): the upstream received %+v; want the request as signed inside", got)
		}
		if all := up.all(); strings.Contains(all, "deny-") {
			t.Errorf("a refused variant reached the upstream:\n%s", all)
		}

		// passthrough: each variant goes as it is.
		r = w.withHostsBin(maskHosts, filepath.Join(bin, "srt"), env, "-s",
			up.maskSettings(w, cred(`,"sigv4":{"presigned":"passthrough","streaming":"passthrough","sigv4a":"passthrough"}`)), "-c",
			`echo "KEY=$AWS_ACCESS_KEY_ID"`+"\n"+sigv4Variants(up.https("s3.test"), "pass-"))
		fake = field(r.stdout, "KEY")
		expect(t, r, 0, "!"+v.keyID, "!sigv4:", "AccessDenied: no Authorization header\nstatus=403\n", "AccessDenied: not a SigV4 Authorization header\nstatus=403\n")
		if got := up.request(t, "/pass-presigned"); !strings.Contains(got.target, "X-Amz-Credential="+fake+"%2F") {
			t.Errorf("passthrough presigned: the upstream received %q", got.target)
		}
		if got := up.request(t, "/pass-streaming"); !strings.HasPrefix(got.header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+fake+"/") ||
			got.header.Get("X-Amz-Content-Sha256") != "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" || !strings.HasSuffix(got.header.Get("Authorization"), "Signature="+strings.Repeat("0", 64)) {
			t.Errorf("passthrough streaming: the upstream received %+v", got)
		}
		if got := up.request(t, "/pass-sigv4a"); !strings.HasPrefix(got.header.Get("Authorization"), "AWS4-ECDSA-P256-SHA256 Credential="+fake+"/") {
			t.Errorf("passthrough sigv4a: the upstream received %+v", got)
		}
	})
}
