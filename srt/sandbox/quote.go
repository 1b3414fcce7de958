package sandbox

import (
	"strings"
)

// bareWord reports whether a word needs no quoting for the shell: it is
// made of [A-Za-z0-9_./:=@+,-] and does not start with "=".
func bareWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case strings.IndexByte("_./:@+,-", c) >= 0:
		case c == '=' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// Quote joins argv into one POSIX shell command line that runs exactly that
// argv: words that need no quoting stay bare, the rest are single-quoted.
func Quote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a == "":
			parts[i] = "''"
		case bareWord(a):
			parts[i] = a
		default:
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'"'"'`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
