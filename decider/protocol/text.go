package protocol

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Character rules of string fields.

// hasControl reports a C0 control (TAB aside when tabOK), DEL or a C1
// control (U+0080–U+009F) in s.
func hasControl(s string, tabOK bool) bool {
	for _, r := range s {
		if r < 0x20 && !(tabOK && r == '\t') || 0x7f <= r && r <= 0x9f {
			return true
		}
	}
	return false
}

// isTokenByte is RFC 9110's tchar.
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return true
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// headerName: an RFC 9110 token, lower-case.
func headerName(n string) error {
	if !isToken(n) {
		return fmt.Errorf("header name %q is not a token", n)
	}
	if hasUpper(n) {
		return fmt.Errorf("header name %q is not lower-case", n)
	}
	return nil
}

// headerValue: UTF-8 with no control character but TAB.
func headerValue(name, v string) error {
	if !utf8.ValidString(v) || hasControl(v, true) {
		return fmt.Errorf("a value of %q has a control character", name)
	}
	return nil
}

// plainText: a non-empty string field other than a header value or a
// reason: UTF-8, no control character at all.
func plainText(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", field)
	}
	if !utf8.ValidString(v) || hasControl(v, false) {
		return fmt.Errorf("%s has a control character", field)
	}
	return nil
}

// reasonText: 1–MaxReason UTF-8 bytes, no control character but TAB.
func reasonText(v string) error {
	switch {
	case v == "":
		return errors.New("reason is empty")
	case len(v) > MaxReason:
		return fmt.Errorf("reason is %d bytes, over %d", len(v), MaxReason)
	case !utf8.ValidString(v) || hasControl(v, true):
		return errors.New("reason has a control character")
	}
	return nil
}

// foldName folds a header name as the proxy matches names: lower-case, with
// '_' and '.' read as '-'.
func foldName(n string) string {
	b := []byte(n)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == '_' || c == '.':
			b[i] = '-'
		}
	}
	return string(b)
}
