package seatbelt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// sbplString writes s as an SBPL string literal: between double quotes,
// with '"' and '\' escaped by a backslash. Every other character stands for
// itself, so a value with a control character (a newline, a NUL) or invalid
// UTF-8, which could be read differently by SBPL's reader, is refused:
// macOS file names are UTF-8, and a name with a control character cannot be
// named in a profile.
func sbplString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8, which a Seatbelt profile cannot name", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return "", fmt.Errorf("%q holds the control character %U, which a Seatbelt profile cannot name", s, r)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// writer accumulates a profile; the first error sticks.
type writer struct {
	b   strings.Builder
	err error
}

func (w *writer) line(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// str quotes s for the profile, naming field in the error.
func (w *writer) str(field, s string) string {
	q, err := sbplString(s)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", field, err)
	}
	return q
}
