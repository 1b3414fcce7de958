package sigv4

import (
	"errors"
	"strings"
)

// The signing algorithms of an Authorization header or X-Amz-Algorithm.
const (
	AlgHMAC  = "AWS4-HMAC-SHA256"       // SigV4
	AlgECDSA = "AWS4-ECDSA-P256-SHA256" // SigV4A
)

// Authorization is a parsed SigV4 Authorization header:
//
//	AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/<service>/aws4_request, SignedHeaders=<h1;h2…>, Signature=<hex>
//
// (SigV4A's credential scope has no region: <key id>/<date>/<service>/aws4_request.)
type Authorization struct {
	Algorithm     string
	KeyID         string
	Scope         string // what follows the key id in Credential: "<date>/<region>/<service>/aws4_request"
	Date          string // yyyymmdd
	Region        string // "" for SigV4A
	Service       string
	SignedHeaders string   // as sent: lower-case names joined with ';'
	Headers       []string // SignedHeaders split
	Signature     string
}

var errNotSigV4 = errors.New("not an AWS4 Authorization header")

// ParseAuthorization parses an Authorization header value of either
// algorithm. Its components may come in any order, separated by ',' and
// optional spaces; each is required once. errNotSigV4 means the scheme is
// another (Basic, Bearer, AWS's SigV2 "AWS <key id>:<signature>").
func ParseAuthorization(v string) (*Authorization, error) {
	alg, rest, _ := strings.Cut(strings.TrimLeft(v, " "), " ")
	if alg != AlgHMAC && alg != AlgECDSA {
		return nil, errNotSigV4
	}
	a := &Authorization{Algorithm: alg}
	var cred string
	var seen [3]bool
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.Trim(part, " ")
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return nil, errors.New("a component of the Authorization header is not name=value")
		}
		i := -1
		switch name {
		case "Credential":
			i, cred = 0, value
		case "SignedHeaders":
			i, a.SignedHeaders = 1, value
		case "Signature":
			i, a.Signature = 2, value
		default:
			return nil, errors.New("unknown component " + quote(name) + " in the Authorization header")
		}
		if seen[i] {
			return nil, errors.New(name + " twice in the Authorization header")
		}
		seen[i] = true
	}
	if !seen[0] || !seen[1] || !seen[2] {
		return nil, errors.New("the Authorization header lacks Credential, SignedHeaders or Signature")
	}
	if err := a.parseCredential(cred); err != nil {
		return nil, err
	}
	if err := a.parseSignedHeaders(); err != nil {
		return nil, err
	}
	sig := a.Signature
	if sig == "" || !isHex(sig, len(sig)) || a.Algorithm == AlgHMAC && len(sig) != 64 {
		return nil, errors.New("the Authorization header's Signature is not hex")
	}
	return a, nil
}

// parseCredential splits Credential into the key id and its scope. The key
// id is what precedes the scope's fixed number of parts, so that a key id
// with '/' in it (a sentinel may have one) is whole.
func (a *Authorization) parseCredential(cred string) error {
	parts := strings.Split(cred, "/")
	n := 4 // date, region, service, aws4_request
	if a.Algorithm == AlgECDSA {
		n = 3 // date, service, aws4_request
	}
	if len(parts) < n+1 || parts[len(parts)-1] != "aws4_request" {
		return errors.New("the Authorization header's Credential is not <key id>/<scope>/aws4_request")
	}
	scope := parts[len(parts)-n:]
	a.KeyID = strings.Join(parts[:len(parts)-n], "/")
	a.Scope = strings.Join(scope, "/")
	a.Date, a.Service = scope[0], scope[n-2]
	if n == 4 {
		a.Region = scope[1]
	}
	if a.KeyID == "" || len(a.Date) != 8 || strings.Trim(a.Date, "0123456789") != "" || a.Service == "" || n == 4 && a.Region == "" {
		return errors.New("the Authorization header's Credential is not <key id>/<date>/<region>/<service>/aws4_request")
	}
	return nil
}

// parseSignedHeaders checks SignedHeaders: lower-case token names, sorted,
// each once, host among them.
func (a *Authorization) parseSignedHeaders() error {
	a.Headers = strings.Split(a.SignedHeaders, ";")
	host := false
	for i, h := range a.Headers {
		if h == "" || !isLowerToken(h) {
			return errors.New("the Authorization header's SignedHeaders is not a list of lower-case header names")
		}
		if i > 0 && a.Headers[i-1] >= h {
			return errors.New("the Authorization header's SignedHeaders is not sorted")
		}
		host = host || h == "host"
	}
	if !host {
		return errors.New("the Authorization header's SignedHeaders does not include host")
	}
	return nil
}

// String is the header value, in the form AWS's SDKs write it.
func (a *Authorization) String() string {
	return a.Algorithm + " Credential=" + a.KeyID + "/" + a.Scope + ", SignedHeaders=" + a.SignedHeaders + ", Signature=" + a.Signature
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isLowerToken reports whether s is an RFC 9110 token without upper-case
// letters.
func isLowerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// quote quotes a client's string for an error, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(`"`+s+`"`, "?")
}
