// Package credmask makes the masks of credentials.envVars and
// credentials.files entries in mode "mask" (docs/credentials.md): the
// sentinels the command sees in place of the real values, and the secrets
// (sentinel → real value) srt hands the decider, which has srt-proxy put
// the real values back on the wire. It reads nothing itself: srt gives it
// the environment and the files' contents. The real values never appear
// in its errors or warnings.
package credmask

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/srt-sandbox/srt/internal/kernrand"
)

// MaxValue is the longest value a mask may carry (the decider protocol's
// bound, docs/decider-protocol.md).
const MaxValue = 65536

// Secret is one masked value: the command sees Sentinel, the proxy sends
// Value.
type Secret struct {
	Sentinel, Value string
	// Entry is the settings entry it comes from: the variable's name or
	// the file's path as configured.
	Entry string
}

// sentinelPrefix and the uuid make the reference's sentinel form.
const sentinelPrefix = "fake_value_"

// padAlphabet is what a sentinel is padded with.
const padAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-"

// Sentinel is a fresh `fake_value_<uuid v4>`, padded with random
// [a-z0-9_-] to n bytes when n is longer.
func Sentinel(n int) string {
	var u [16]byte
	kernrand.Fill(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	s := sentinelPrefix + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	if n <= len(s) {
		return s
	}
	pad := make([]byte, n-len(s))
	// Rejection sampling keeps the characters uniform: 38 of 256 values,
	// taking the bytes below 228 (6×38).
	var buf [64]byte
	for i := 0; i < len(pad); {
		kernrand.Fill(buf[:])
		for _, b := range buf {
			if b < 228 && i < len(pad) {
				pad[i] = padAlphabet[int(b)%len(padAlphabet)]
				i++
			}
		}
	}
	return s + string(pad)
}

// masker replaces values by sentinels, one sentinel per distinct value.
type masker struct {
	entry   string
	secrets []Secret
	byValue map[string]string
}

func newMasker(entry string) *masker { return &masker{entry: entry, byValue: map[string]string{}} }

// sentinel is value's sentinel, made on first use.
func (m *masker) sentinel(value string) string {
	if s, ok := m.byValue[value]; ok {
		return s
	}
	s := Sentinel(len(value))
	m.byValue[value] = s
	m.secrets = append(m.secrets, Secret{Sentinel: s, Value: value, Entry: m.entry})
	return s
}

// replaceGroups replaces group 1 of every match of re in s.
func (m *masker) replaceGroups(re *regexp.Regexp, s string) (string, bool) {
	var b strings.Builder
	last, found := 0, false
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		if loc[2] < 0 || loc[3] <= loc[2] {
			continue
		}
		found = true
		b.WriteString(s[last:loc[2]])
		b.WriteString(m.sentinel(s[loc[2]:loc[3]]))
		last = loc[3]
	}
	b.WriteString(s[last:])
	return b.String(), found
}

// everywhere replaces every occurrence of every masked value in s (the
// longest values first, so that one inside another is not cut).
func (m *masker) everywhere(s string) string {
	secrets := append([]Secret(nil), m.secrets...)
	for i := 1; i < len(secrets); i++ {
		for j := i; j > 0 && len(secrets[j].Value) > len(secrets[j-1].Value); j-- {
			secrets[j], secrets[j-1] = secrets[j-1], secrets[j]
		}
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, sec := range secrets {
		pairs = append(pairs, sec.Value, sec.Sentinel)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// jwtParts splits a token that parses as a JWT: three base64url parts
// (no padding), the first two JSON objects.
func jwtParts(tok string) (header, payload []byte, ok bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return nil, nil, false
	}
	dec := base64.RawURLEncoding.Strict()
	var err error
	if header, err = dec.DecodeString(parts[0]); err != nil || !isJSONObject(header) {
		return nil, nil, false
	}
	if payload, err = dec.DecodeString(parts[1]); err != nil || !isJSONObject(payload) {
		return nil, nil, false
	}
	if _, err = dec.DecodeString(parts[2]); err != nil {
		return nil, nil, false
	}
	return header, payload, true
}

// fakeSignature is the fake tokens' signature, the reference's.
var fakeSignature = base64.RawURLEncoding.EncodeToString([]byte("srt-fake"))

// fakeHeader is a whole fake token's header.
var fakeHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// farFuture is a whole fake token's exp.
const farFuture = 9999999999

// maskJWT masks one token that parses as a JWT: the whole token, by a
// structurally valid fake HS256 token whose whole text is its sentinel, or
// with claims, the named string claims by sentinels (re-encoded payload)
// and the token by the token so made. ok is false when tok is not a JWT.
func (m *masker) maskJWT(tok string, claims []string) (string, bool) {
	_, payload, ok := jwtParts(tok)
	if !ok {
		return "", false
	}
	if s, ok := m.byValue[tok]; ok {
		return s, true
	}
	var fake string
	if len(claims) == 0 {
		body := fmt.Sprintf(`{"sub":%q,"exp":%d}`, Sentinel(0), farFuture)
		fake = fakeHeader + "." + base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + fakeSignature
	} else {
		masked, err := maskClaims(payload, claims, m.sentinel)
		if err != nil {
			return "", false
		}
		fake = strings.SplitN(tok, ".", 2)[0] + "." + base64.RawURLEncoding.EncodeToString(masked) + "." + fakeSignature
	}
	m.byValue[tok] = fake
	m.secrets = append(m.secrets, Secret{Sentinel: fake, Value: tok, Entry: m.entry})
	return fake, true
}

func validText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}
