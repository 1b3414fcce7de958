package srtlink

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// The attribution user: the proxy user name that names the command a
// connection belongs to. srt makes it from the command's attribution key
// (UserFor) and puts it in the sandbox's proxy credentials and in its
// capture listeners' handoff (Message.User); srt-proxy passes it to the
// decider as the request's user, as it came; the decider finds the
// command's own allow list by its label (UserLabel), under which it
// registered the list (KeyLabel of the same key).

// UserPrefix starts every attribution user that carries a label.
const UserPrefix = "srt."

// BareUser is the attribution user of no command in particular: an empty
// key, or one whose user would be longer than MaxUser.
const BareUser = "srt"

// MaxUser is the longest attribution user, in bytes: SOCKS5's user name
// and password authentication (RFC 1929) carries no longer one.
const MaxUser = 255

// KeyLabel is the part of a proxy user name that identifies a command: the
// standard base64 of the UTF-8 of the first 100 UTF-16 units of its
// attribution key, as the reference's Buffer.from(key.slice(0, 100))
// makes it.
func KeyLabel(key string) string {
	u := utf16.Encode([]rune(key))
	if len(u) > 100 {
		// A pair cut in half leaves a lone surrogate, which becomes
		// U+FFFD, as the reference's Buffer.from does.
		u = u[:100]
	}
	return base64.StdEncoding.EncodeToString([]byte(string(utf16.Decode(u))))
}

// UserFor is the attribution user of a key: UserPrefix and its KeyLabel,
// or BareUser for the empty key and when that would exceed MaxUser bytes.
func UserFor(key string) string {
	if key == "" {
		return BareUser
	}
	u := UserPrefix + KeyLabel(key)
	if len(u) > MaxUser {
		return BareUser
	}
	return u
}

// UserLabel is the label a proxy user name carries (what follows
// UserPrefix), or "" when it carries none.
func UserLabel(user string) string {
	label, ok := strings.CutPrefix(user, UserPrefix)
	if !ok {
		return ""
	}
	return label
}
