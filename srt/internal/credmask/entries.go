package credmask

import (
	"fmt"
	"regexp"

	"github.com/srt-sandbox/srt/settings"
)

// Outcome is what one entry's mask makes.
type Outcome struct {
	// Text is what the command sees: the variable's value or the file's
	// content, with the sentinels in place.
	Text string
	// Unset: the variable is removed, the file hidden (onExtractNoMatch
	// "deny").
	Unset bool
	// Secrets are the values masked, with their sentinels.
	Secrets []Secret
	// Warning, when not "", is printed on srt's stderr: the entry is left
	// unprotected (the reference's texts).
	Warning string
}

// fileJWTPattern finds the tokens of a file with decode "jwt" and no
// extract (the reference's).
const fileJWTPattern = `(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`

// Env masks the value of a variable in mode "mask".
func Env(e settings.CredentialEnv, value string) (Outcome, error) {
	m := newMasker(e.Name)
	if e.Decode == "jwt" {
		text, ok := m.jwts(e.Extract, value, e.MaskClaims)
		if !ok {
			// The reference fails open here whatever onExtractNoMatch says.
			return Outcome{Text: value, Warning: fmt.Sprintf(`[sandbox-runtime] WARNING: credentials.envVars entry "%s" has decode "jwt" but its value did not verify as a JWT. The variable is left UNPROTECTED (real value visible as-is inside the sandbox). Fix the config or remove the entry.`, e.Name)}, nil
		}
		return Outcome{Text: text, Secrets: m.secrets}, nil
	}
	if e.Extract == "" {
		return Outcome{Text: m.sentinel(value), Secrets: m.secrets}, nil
	}
	text, found := m.replaceGroups(regexp.MustCompile(e.Extract), value)
	if found {
		return Outcome{Text: text, Secrets: m.secrets}, nil
	}
	switch e.OnExtractNoMatch {
	case "deny":
		return Outcome{Unset: true}, nil
	case "error":
		return Outcome{}, fmt.Errorf(`credentials.envVars entry "%s": extract pattern "%s" matched nothing (onExtractNoMatch: "error"). Fix the regex, change to "warn"/"deny", or remove the entry.`, e.Name, e.Extract)
	}
	return Outcome{Text: value, Warning: fmt.Sprintf(`[sandbox-runtime] WARNING: credentials.envVars entry "%s" has extract pattern "%s" that matched nothing in the variable's value. The variable is left UNPROTECTED (visible as-is inside the sandbox). Fix the regex, set onExtractNoMatch to "deny" or "error", or remove the entry.`, e.Name, e.Extract)}, nil
}

// File masks the content of a file in mode "mask" (valid UTF-8 text,
// which the caller checks with Text).
func File(f settings.CredentialFile, content string) (Outcome, error) {
	m := newMasker(f.Path)
	var text, pattern string
	var found bool
	switch {
	case f.Decode == "jwt":
		pattern = f.Extract
		if pattern == "" {
			pattern = fileJWTPattern
		}
		text, found = m.jwts(pattern, content, f.MaskClaims)
	case f.Extract != "":
		pattern = f.Extract
		text, found = m.replaceGroups(regexp.MustCompile(pattern), content)
	default:
		return Outcome{Text: m.sentinel(content), Secrets: m.secrets}, nil
	}
	if found {
		if f.MaskDuplicates {
			text = m.everywhere(text)
		}
		return Outcome{Text: text, Secrets: m.secrets}, nil
	}
	what := fmt.Sprintf("extract pattern \"%s\" that matched nothing", pattern)
	inFile := what + " in the file"
	if f.Decode == "jwt" {
		what = fmt.Sprintf("decode \"jwt\" with pattern \"%s\" that matched no verified JWT", pattern)
		inFile = what + " in the file"
	}
	switch f.OnExtractNoMatch {
	case "deny":
		return Outcome{Unset: true}, nil
	case "error":
		return Outcome{}, fmt.Errorf("credentials.files entry \"%s\": %s (onExtractNoMatch: \"error\"). Fix the config, change to \"warn\"/\"deny\", or remove the entry.", f.Path, what)
	}
	return Outcome{Text: content, Warning: fmt.Sprintf(`[sandbox-runtime] WARNING: credentials.files entry "%s" has %s. The file is left UNPROTECTED (readable as-is inside the sandbox). Fix the config, set onExtractNoMatch to "deny" or "error", or remove the entry.`, f.Path, inFile)}, nil
}

// jwts masks the JWTs of s: group 1 of each match of pattern, or s
// whole when pattern is "". found is false when none parses as a JWT.
func (m *masker) jwts(pattern, s string, claims []string) (string, bool) {
	if pattern == "" {
		fake, ok := m.maskJWT(s, claims)
		return fake, ok
	}
	re := regexp.MustCompile(pattern)
	out, found, last := "", false, 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		if loc[2] < 0 {
			continue
		}
		fake, ok := m.maskJWT(s[loc[2]:loc[3]], claims)
		if !ok {
			continue
		}
		found = true
		out += s[last:loc[2]] + fake
		last = loc[3]
	}
	return out + s[last:], found
}

// Text reports whether a file's content can be masked: UTF-8 text without
// NUL bytes.
func Text(b []byte) bool { return validText(b) }
