package protocol

import "strconv"

// The canonical writer: compact, fields in the spec's order, strings
// escaped as JavaScript's JSON.stringify escapes them (", \, and C0 controls
// as \b \f \n \r \t or \u00xx; everything else as raw UTF-8), so that srt's
// frames are byte for byte the reference's.

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendHeaders(b []byte, h Headers) []byte {
	b = append(b, '{')
	for i, f := range h {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Name)
		b = append(b, ':')
		b = appendStrings(b, f.Values)
	}
	return append(b, '}')
}

// appendKey writes ,"key": (or "key": first in the object).
func appendKey(b []byte, key string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
