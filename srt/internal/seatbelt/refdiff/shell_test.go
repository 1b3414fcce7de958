package refdiff

import (
	"fmt"
	"strings"
)

// shellWords splits a POSIX shell command line into its words: '…' and
// "…" quoting and backslash escapes; no expansion (the wrapped commands
// compared here have none outside quotes).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' at offset %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`\n", s[j+1]) >= 0 {
					j++
				} else if s[j] == '$' || s[j] == '`' {
					return nil, fmt.Errorf("expansion inside \"…\" at offset %d", j)
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated \" at offset %d", i)
			}
			i = j
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		case strings.IndexByte("$`;&|<>(){}*?[~", c) >= 0:
			return nil, fmt.Errorf("unquoted %q at offset %d: not a plain command line", c, i)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// wrapped is a sandboxed command line taken apart.
type wrapped struct {
	unset []string
	set   map[string]string
	exe   string // sandbox-exec's path
	sbpl  string
	rest  []string // shell -c command
}

// parseWrapped reads `env [-u N]… [N=V]… <sandbox-exec> -p <profile> …`.
func parseWrapped(s string) (*wrapped, error) {
	ws, err := shellWords(s)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 || ws[0] != "env" {
		return nil, fmt.Errorf("does not start with env: %.80q", s)
	}
	w := &wrapped{set: map[string]string{}}
	i := 1
	for ; i < len(ws); i++ {
		if ws[i] == "-u" && i+1 < len(ws) {
			w.unset = append(w.unset, ws[i+1])
			i++
			continue
		}
		name, value, ok := strings.Cut(ws[i], "=")
		if !ok || strings.Contains(name, "/") {
			break
		}
		w.set[name] = value
	}
	if len(ws)-i < 3 || ws[i+1] != "-p" {
		return nil, fmt.Errorf("no \"<sandbox-exec> -p <profile>\" after the environment: %q", ws[i:])
	}
	w.exe, w.sbpl, w.rest = ws[i], ws[i+2], ws[i+3:]
	return w, nil
}
