package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
)

// singleEncoded are the services whose path is signed as sent, neither
// encoded again nor normalized (AWS: "each path segment must be
// URI-encoded twice — except for Amazon S3").
var singleEncoded = map[string]bool{
	"s3":               true,
	"s3-object-lambda": true, // S3's object lambda access points sign as S3
	"s3-outposts":      true,
	"s3express":        true, // S3 directory buckets
}

// canonicalURI is a request path as the canonical request has it. path is
// as sent (percent-encoded).
func canonicalURI(path, service string) string {
	if path == "" {
		return "/"
	}
	if singleEncoded[service] {
		return path
	}
	return escape(removeDotSegments(path), true)
}

// removeDotSegments drops "." and empty segments and resolves ".." (RFC
// 3986 §5.2.4; AWS also removes consecutive slashes), keeping a leading
// and a trailing '/'.
func removeDotSegments(path string) string {
	var out []string
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	s := strings.Join(out, "/")
	if path[0] == '/' {
		s = "/" + s
	}
	if len(out) > 0 && path[len(path)-1] == '/' {
		s += "/"
	}
	if s == "" {
		return "/"
	}
	return s
}

// escape percent-encodes every byte but RFC 3986's unreserved ones (and
// '/' when slash), upper-case hex: AWS's UriEncode.
func escape(s string, slash bool) string {
	const hexUpper = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || slash && c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUpper[c>>4])
		b.WriteByte(hexUpper[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

var errQueryEscape = errors.New("the query has a '%' that is not a percent-encoded byte")

// canonicalQuery is a raw query as the canonical request has it: each
// name and value decoded ('+' is a space, as AWS's SDKs read a query) and
// encoded again with UriEncode, a name without '=' given an empty value,
// sorted by name then value.
func canonicalQuery(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	var pairs []string
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		n, ok1 := unescapeQuery(name)
		v, ok2 := unescapeQuery(value)
		if !ok1 || !ok2 {
			return "", errQueryEscape
		}
		pairs = append(pairs, escape(n, false)+"="+escape(v, false))
	}
	// By name, then value: not as "name=value" strings, where '=' would
	// sort after '-' and '.' of a longer name.
	slices.SortFunc(pairs, func(a, b string) int {
		an, av, _ := strings.Cut(a, "=")
		bn, bv, _ := strings.Cut(b, "=")
		if c := strings.Compare(an, bn); c != 0 {
			return c
		}
		return strings.Compare(av, bv)
	})
	return strings.Join(pairs, "&"), nil
}

// unescapeQuery decodes a query component: %XX and '+' as a space.
func unescapeQuery(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1:i+3], 2) {
				return "", false
			}
			hi, _ := hex.DecodeString(s[i+1 : i+3])
			b = append(b, hi[0])
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

// canonicalValue is a header field value as the canonical request has it:
// leading and trailing spaces removed, each run of spaces inside folded to
// one (AWS's Trimall).
func canonicalValue(v string) string {
	v = strings.Trim(v, " ")
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	space := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' && space {
			continue
		}
		space = c == ' '
		b.WriteByte(c)
	}
	return b.String()
}

// canonicalRequest is the request as it is signed:
//
//	method \n canonical URI \n canonical query \n canonical headers \n \n signed headers \n payload hash
//
// values maps each signed header to its fields' values in order.
func canonicalRequest(method, uri, query string, a *Authorization, values map[string][]string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte('\n')
	b.WriteString(uri)
	b.WriteByte('\n')
	b.WriteString(query)
	b.WriteByte('\n')
	for _, name := range a.Headers {
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range values[name] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(canonicalValue(v))
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(a.SignedHeaders)
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// signature is the SigV4 signature of a canonical request made at amzDate
// (yyyymmddThhmmssZ) in a's scope with secret.
func signature(secret, amzDate string, a *Authorization, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	toSign := AlgHMAC + "\n" + amzDate + "\n" + a.Scope + "\n" + hex.EncodeToString(sum[:])
	key := mac([]byte("AWS4"+secret), a.Date)
	key = mac(key, a.Region)
	key = mac(key, a.Service)
	key = mac(key, "aws4_request")
	return hex.EncodeToString(mac(key, toSign))
}

func mac(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}
