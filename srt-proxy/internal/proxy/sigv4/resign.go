package sigv4

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/srt-sandbox/decider/protocol"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// Head is the request as it goes upstream, as far as a signature covers
// it. Resign edits Fields' values in place (Fields shares its array with
// the head the caller forwards): the Authorization header, and the
// sentinels in signed headers and x-amz-security-token.
type Head struct {
	Method string
	Target string // the request-target sent upstream, in origin form: path[?query]
	Host   string // the Host header sent upstream
	Fields []http1.Field
}

// Payload hashes signed literally that are not a hash: the body is not
// signed (UNSIGNED-PAYLOAD), or is sent in unsigned chunks with an
// unsigned trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER, what the AWS SDKs
// send for an S3 upload with a checksum over TLS). Either way the header's
// signature is the only one, and can be made again.
var literalPayloads = map[string]bool{
	"UNSIGNED-PAYLOAD":                   true,
	"STREAMING-UNSIGNED-PAYLOAD-TRAILER": true,
}

// Resign signs h again with the real key when it is an AWS request signed
// with the masked access key id of one of masks (the ones the decider named
// for this request: ask.Verdict.Inject). body is the request body as it
// will be sent (nil: none); the returned reader is what to send in its
// place: body itself, or the bytes Resign read to hash it.
//
// A request signed with another key, or not signed, is left as it is. A
// variant that cannot be signed again is refused unless opt lets it pass;
// the error is then a *Refusal. Any other error is the body's (reading it
// failed): the request cannot be forwarded either.
func Resign(h Head, body io.Reader, masks []ask.Mask, opt Options) (io.Reader, error) {
	keys := keyMasks(masks)
	if len(keys) == 0 {
		return body, nil
	}
	v, detail, a, key, err := variantOf(h, keys)
	switch {
	case err != nil:
		return body, err
	case v != 0:
		return variantPolicy(body, v, opt.policy(v), detail)
	case a == nil:
		return body, nil
	}
	path, query, _ := strings.Cut(h.Target, "?")
	hashes := h.values("x-amz-content-sha256")
	if len(hashes) > 1 {
		return nil, unsignable("more than one x-amz-content-sha256 header")
	}
	payload := ""
	if len(hashes) == 1 {
		payload = hashes[0]
		if !literalPayloads[payload] && !isHex(payload, 64) {
			return nil, unsignable("x-amz-content-sha256 is neither a SHA-256, UNSIGNED-PAYLOAD nor STREAMING-…")
		}
	}
	secret := secretOf(key, masks)
	if secret == nil {
		return nil, unsignable("the secret access key of its pair (" + key.AWSPair + ") is not injected for this host")
	}
	dates := h.values("x-amz-date")
	if len(dates) != 1 || len(dates[0]) != 16 || !strings.HasPrefix(dates[0], a.Date+"T") {
		return nil, unsignable("it needs one X-Amz-Date header (yyyymmddThhmmssZ) on the Credential's date")
	}
	if !strings.HasPrefix(path, "/") {
		return nil, unsignable("its request-target is not a path")
	}
	cq, err := canonicalQuery(query)
	if err != nil {
		return nil, unsignable(err.Error())
	}
	if payload == "" {
		if body, payload, err = hashBody(h, body); err != nil {
			return nil, err
		}
	}
	values := h.substitute(a, masks)
	canonical := canonicalRequest(h.Method, canonicalURI(path, a.Service), cq, a, values, payload)
	a.KeyID = key.Value
	a.Signature = signature(secret.Value, dates[0], a, canonical)
	for i := range h.Fields {
		if h.Fields[i].Lower == "authorization" {
			h.Fields[i].Value = a.String()
		}
	}
	return body, nil
}

// PassesThrough reports whether h is a request signed with the masked
// access key id of one of masks in a variant Resign cannot sign again
// and opt lets pass (Passthrough). Such a request goes upstream as the
// client signed it, no sentinel in it replaced: a real key id or token
// put in would change what was signed, and the request would still be
// signed with the masked key.
func PassesThrough(h Head, masks []ask.Mask, opt Options) bool {
	keys := keyMasks(masks)
	if len(keys) == 0 {
		return false
	}
	v, _, _, _, err := variantOf(h, keys)
	return err == nil && v != 0 && opt.policy(v) == Passthrough
}

// variantOf finds how h is signed with one of keys: v is the variant
// Resign cannot sign again (0: none), with the detail its refusal names;
// a and key are the Authorization header signed with a masked key and
// that key (nil when there is none). err is a refusal of a header that
// names a masked key but cannot be read.
func variantOf(h Head, keys []*ask.Mask) (v Variant, detail string, a *Authorization, key *ask.Mask, err error) {
	_, query, _ := strings.Cut(h.Target, "?")
	if alg, ok := presignedWith(query, keys); ok {
		if alg == AlgECDSA {
			return VariantSigV4A, AlgECDSA, nil, nil, nil
		}
		return VariantPresigned, "", nil, nil, nil
	}
	a, key, err = signedWith(h, keys)
	switch {
	case err != nil || a == nil:
		return 0, "", nil, nil, err
	case a.Algorithm == AlgECDSA:
		return VariantSigV4A, AlgECDSA, a, key, nil
	}
	// More than one x-amz-content-sha256 is Resign's refusal.
	if hashes := h.values("x-amz-content-sha256"); len(hashes) == 1 && !literalPayloads[hashes[0]] && strings.HasPrefix(hashes[0], "STREAMING-") {
		return VariantStreaming, payloadName(hashes[0]), a, key, nil
	}
	return 0, "", a, key, nil
}

// policy is opt's setting for variant v.
func (opt Options) policy(v Variant) Policy {
	switch v {
	case VariantStreaming:
		return opt.Streaming
	case VariantPresigned:
		return opt.Presigned
	case VariantSigV4A:
		return opt.SigV4A
	}
	return Deny
}

// variantPolicy forwards a variant unchanged or refuses it.
func variantPolicy(body io.Reader, v Variant, p Policy, detail string) (io.Reader, error) {
	if p == Passthrough {
		return body, nil
	}
	return nil, refuseVariant(v, detail)
}

// keyMasks are the masks that are an AWS access key id.
func keyMasks(masks []ask.Mask) []*ask.Mask {
	var keys []*ask.Mask
	for i := range masks {
		if masks[i].AWSRole == protocol.AWSAccessKeyID && masks[i].AWSPair != "" {
			keys = append(keys, &masks[i])
		}
	}
	return keys
}

// secretOf is the secret access key of key's pair; nil when it is not
// among masks. (The pair's session token, when there is one, is a
// sentinel like any other: substitute puts it in place.)
func secretOf(key *ask.Mask, masks []ask.Mask) *ask.Mask {
	for i := range masks {
		if m := &masks[i]; m.AWSPair == key.AWSPair && m.AWSRole == protocol.AWSSecretAccessKey {
			return m
		}
	}
	return nil
}

// matchKey is the mask whose sentinel is the key id of credential
// ("<key id>/<scope>"), compared in constant time; nil when none.
func matchKey(credential string, keys []*ask.Mask) *ask.Mask {
	var found *ask.Mask
	for _, k := range keys {
		n := len(k.Sentinel)
		if len(credential) > n && credential[n] == '/' &&
			subtle.ConstantTimeCompare([]byte(credential[:n]), []byte(k.Sentinel)) == 1 {
			found = k
		}
	}
	return found
}

// presignedWith reports whether the query carries X-Amz-Credential with a
// masked key id, and X-Amz-Algorithm's value. Parameter names are compared
// without case, and the credential read with '+' as itself and as a space,
// so that no spelling of a masked presigned request goes out as if it were
// none.
func presignedWith(query string, keys []*ask.Mask) (alg string, masked bool) {
	for part := range strings.SplitSeq(query, "&") {
		name, value, _ := strings.Cut(part, "=")
		n, _ := unescapeQuery(name)
		switch {
		case strings.EqualFold(n, "X-Amz-Algorithm"):
			alg, _ = unescapeQuery(value)
		case strings.EqualFold(n, "X-Amz-Credential"):
			plus := strings.ReplaceAll(value, "+", "%2B")
			for _, v := range []string{value, plus} {
				if cred, ok := unescapeQuery(v); ok && matchKey(cred, keys) != nil {
					masked = true
				}
			}
		}
	}
	return alg, masked
}

// signedWith finds an Authorization header signed with a masked key: its
// parse and the key's mask, or nil when there is none. A header that
// names a masked key but does not parse, or a second Authorization header
// beside it, is a refusal.
func signedWith(h Head, keys []*ask.Mask) (*Authorization, *ask.Mask, error) {
	auths := h.values("authorization")
	for _, v := range auths {
		a, err := ParseAuthorization(v)
		if err == errNotSigV4 {
			continue
		}
		if err != nil {
			if containsKey(v, keys) {
				return nil, nil, unsignable(err.Error())
			}
			continue
		}
		key := matchKey(a.KeyID+"/", keys)
		if key == nil {
			continue
		}
		if len(auths) > 1 {
			return nil, nil, unsignable("more than one Authorization header")
		}
		return a, key, nil
	}
	return nil, nil, nil
}

// containsKey reports whether a masked key's sentinel is somewhere in s.
func containsKey(s string, keys []*ask.Mask) bool {
	for _, k := range keys {
		if indexSentinel(s, 0, k.Sentinel) >= 0 {
			return true
		}
	}
	return false
}

// indexSentinel is the first index from i where s has sentinel, compared
// in constant time at each position; -1 when none.
func indexSentinel(s string, i int, sentinel string) int {
	n := len(sentinel)
	found := -1
	for ; n > 0 && i+n <= len(s); i++ {
		if subtle.ConstantTimeCompare([]byte(s[i:i+n]), []byte(sentinel)) == 1 && found < 0 {
			found = i
		}
	}
	return found
}

// values are the values of the fields with a lower-case name.
func (h Head) values(lower string) []string {
	var out []string
	for _, f := range h.Fields {
		if f.Lower == lower {
			out = append(out, f.Value)
		}
	}
	return out
}

// substitute puts the masks' values in place of their sentinels in the
// signed headers and x-amz-security-token (the pair's session token goes
// there), in h's fields, and returns the signed headers' values as they
// now go: what the signature covers is what is sent.
func (h Head) substitute(a *Authorization, masks []ask.Mask) map[string][]string {
	signed := make(map[string]bool, len(a.Headers))
	for _, n := range a.Headers {
		signed[n] = true
	}
	values := make(map[string][]string, len(a.Headers))
	values["host"] = []string{replaceSentinels(h.Host, masks)}
	for i := range h.Fields {
		f := &h.Fields[i]
		if f.Lower == "host" || !signed[f.Lower] && f.Lower != "x-amz-security-token" {
			continue
		}
		f.Value = replaceSentinels(f.Value, masks)
		if signed[f.Lower] {
			values[f.Lower] = append(values[f.Lower], f.Value)
		}
	}
	return values
}

// replaceSentinels puts each mask's value where s has its sentinel.
// Sentinels do not overlap (the decider protocol's rule).
func replaceSentinels(s string, masks []ask.Mask) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		m := sentinelAt(s, i, masks)
		if m == nil {
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(m.Value)
		i += len(m.Sentinel)
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// sentinelAt is the mask whose sentinel s has at i, compared in constant
// time; nil when none.
func sentinelAt(s string, i int, masks []ask.Mask) *ask.Mask {
	var found *ask.Mask
	for j := range masks {
		m := &masks[j]
		n := len(m.Sentinel)
		if n > 0 && i+n <= len(s) && subtle.ConstantTimeCompare([]byte(s[i:i+n]), []byte(m.Sentinel)) == 1 {
			found = m
		}
	}
	return found
}

// hashBody reads body (up to MaxBody) and returns it as a reader with its
// SHA-256, hex.
func hashBody(h Head, body io.Reader) (io.Reader, string, error) {
	if cl := h.values("content-length"); len(cl) == 1 {
		if n, err := strconv.ParseInt(cl[0], 10, 64); err == nil && n > MaxBody {
			return nil, "", &Refusal{Variant: VariantTooLarge, Reason: WhyTooLarge}
		}
	}
	var buf []byte
	if body != nil {
		var b bytes.Buffer
		n, err := b.ReadFrom(io.LimitReader(body, MaxBody+1))
		if err != nil {
			return nil, "", fmt.Errorf("reading the request body: %w", err)
		}
		if n > MaxBody {
			return nil, "", &Refusal{Variant: VariantTooLarge, Reason: WhyTooLarge}
		}
		buf = b.Bytes()
	}
	sum := sha256.Sum256(buf)
	return bytes.NewReader(buf), hex.EncodeToString(sum[:]), nil
}

// payloadName is a STREAMING-… payload hash for a refusal's reason, or
// "STREAMING-…" when it is not one of AWS's names' characters.
func payloadName(v string) string {
	if len(v) > 64 || strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
		return "STREAMING-…"
	}
	return v
}
