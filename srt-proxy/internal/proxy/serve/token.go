package serve

import (
	"crypto/subtle"
)

// TokenEqual compares a presented password with the proxy credential
// (the per-run token of srt's mode) in constant time; no token matches
// nothing.
func TokenEqual(got, token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
