package settings

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/srt-sandbox/decider/policy"
)

// isEnvName reports whether s is a POSIX environment variable name.
func isEnvName(s string) bool {
	for i, r := range s {
		switch {
		case r == '_', 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

func (c *checker) credentials(p path, v *value, cfg *Config, root *value) {
	cr := &cfg.Credentials
	cr.Present = true
	ok := c.Object(p, v, []field{
		{Name: "files", Check: func(p path, v *value) {
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			fsDisabled := false
			if fsv := root.Get("filesystem"); fsv != nil && fsv.Kind == kindObject {
				d := fsv.Get("disabled")
				fsDisabled = d != nil && d.Kind == kindBool && d.Bool
			}
			for i, e := range arr {
				if f, ok := c.credentialFile(p.Idx(i), e, fsDisabled); ok {
					cr.Files = append(cr.Files, f)
				}
			}
		}},
		{Name: "envVars", Check: func(p path, v *value) {
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				if ev, ok := c.credentialEnv(p.Idx(i), e); ok {
					cr.EnvVars = append(cr.EnvVars, ev)
				}
			}
		}},
		{Name: "allowPlaintextInject", Check: func(p path, v *value) { cr.AllowPlaintextInject, _ = c.Boolean(p, v) }},
		{Name: "awsPairs", Check: func(p path, v *value) {
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				var pair AWSPair
				c.Object(p.Idx(i), e, []field{
					{Name: "accessKeyIdVar", Required: true, Check: func(p path, v *value) { pair.AccessKeyIDVar, _ = c.envName(p, v) }},
					{Name: "secretAccessKeyVar", Required: true, Check: func(p path, v *value) { pair.SecretAccessKeyVar, _ = c.envName(p, v) }},
					{Name: "sessionTokenVar", Check: func(p path, v *value) { pair.SessionTokenVar, _ = c.envName(p, v) }},
				})
				cr.AWSPairs = append(cr.AWSPairs, pair)
			}
		}},
		{Name: "sigv4", Check: func(p path, v *value) {
			s := &SigV4{Streaming: "deny", Presigned: "deny", SigV4A: "deny"}
			c.Object(p, v, []field{
				{Name: "streaming", Check: func(p path, v *value) { s.Streaming, _ = c.Enum(p, v, "deny", "passthrough") }},
				{Name: "presigned", Check: func(p path, v *value) { s.Presigned, _ = c.Enum(p, v, "deny", "passthrough") }},
				{Name: "sigv4a", Check: func(p path, v *value) { s.SigV4A, _ = c.Enum(p, v, "deny", "passthrough") }},
			})
			cr.SigV4 = s
		}},
	})
	if !ok {
		return
	}
	masks := false
	for _, e := range cr.EnvVars {
		masks = masks || e.Mode == "mask"
	}
	for _, f := range cr.Files {
		masks = masks || f.Mode == "mask"
	}
	if masks && !cr.AllowPlaintextInject && (root.Get("network") == nil || root.Get("network").Kind != kindObject || root.Get("network").Get("tlsTerminate") == nil) {
		c.Add(p, "Credential masking requires network.tlsTerminate so substitution runs only over a verified TLS connection. Enable tlsTerminate, or set credentials.allowPlaintextInject to opt out (not recommended).")
	}
}

func (c *checker) envName(p path, v *value) (string, bool) {
	s, ok := c.Str(p, v)
	if ok && !isEnvName(s) {
		c.Add(p, "Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores")
		return "", false
	}
	return s, ok
}

// maskFields are the keys that env and file entries share.
type maskFields struct {
	Mode, Extract, OnExtractNoMatch, Decode string
	MaskClaims                              []string
	InjectHosts                             []policy.Pattern
}

func (c *checker) maskFieldList(m *maskFields) []field {
	return []field{
		{Name: "mode", Required: true, Check: func(p path, v *value) { m.Mode, _ = c.Enum(p, v, "deny", "mask") }},
		{Name: "extract", Check: func(p path, v *value) {
			s, ok := c.Str(p, v)
			if !ok {
				return
			}
			re, err := regexp.Compile(s)
			switch {
			case err != nil:
				c.Add(p, "extract is not a valid regular expression: %v", err)
			case re.NumSubexp() < 1:
				c.Add(p, "%s", `extract must contain at least one capturing group — group 1 is the credential value to mask (e.g. "token:\s*(\S+)").`)
			default:
				m.Extract = s
			}
		}},
		{Name: "onExtractNoMatch", Check: func(p path, v *value) { m.OnExtractNoMatch, _ = c.Enum(p, v, "warn", "deny", "error") }},
		{Name: "decode", Check: func(p path, v *value) { m.Decode, _ = c.Enum(p, v, "jwt") }},
		{Name: "maskClaims", Check: func(p path, v *value) { m.MaskClaims, _ = c.Strings(p, v, true) }},
		{Name: "injectHosts", Check: func(p path, v *value) {
			_, m.InjectHosts = c.Patterns(p, v, policy.ParseHostPattern, patternMessage)
		}},
	}
}

// maskChecks runs the reference's per-entry cross-field checks. wholeWhat is
// what masking without maskClaims covers: "the whole value" for a variable,
// "the extracted value whole" for a file, as the reference words it.
func (c *checker) maskChecks(p path, v *value, m *maskFields, wholeWhat string) {
	// An empty injectHosts only contradicts a mask: a deny entry never
	// injects, and the reference accepts it there.
	if ih := v.Get("injectHosts"); ih != nil && ih.Kind == kindArray && len(ih.Arr) == 0 && m.Mode == "mask" {
		c.Add(p, "injectHosts is explicitly empty — the credential would be masked but never injected. Omit injectHosts to default to network.allowedDomains, or list the intended hosts.")
	}
	if mc := v.Get("maskClaims"); mc != nil && mc.Kind == kindArray {
		if v.Get("decode") == nil {
			c.Add(p.Key("maskClaims"), "maskClaims requires decode — it names claims inside the decoded payload. Set decode (e.g. \"jwt\"), or remove maskClaims to mask %s.", wholeWhat)
		}
		if len(mc.Arr) == 0 {
			c.Add(p.Key("maskClaims"), "maskClaims is explicitly empty — no claim would ever be masked. Omit maskClaims to mask the whole token, or list the claims to protect.")
		}
	}
}

func (c *checker) credentialEnv(p path, v *value) (CredentialEnv, bool) {
	var m maskFields
	var name string
	fields := append(c.maskFieldList(&m), field{Name: "name", Required: true, Check: func(p path, v *value) { name, _ = c.envName(p, v) }})
	before := len(c.Issues)
	if !c.Object(p, v, fields) {
		return CredentialEnv{}, false
	}
	c.maskChecks(p, v, &m, "the whole value")
	return CredentialEnv{Name: name, Mode: m.Mode, Extract: m.Extract, OnExtractNoMatch: m.OnExtractNoMatch,
		Decode: m.Decode, MaskClaims: m.MaskClaims, InjectHosts: m.InjectHosts}, len(c.Issues) == before
}

func (c *checker) credentialFile(p path, v *value, fsDisabled bool) (CredentialFile, bool) {
	var m maskFields
	var fpath string
	var dups bool
	fields := append(c.maskFieldList(&m),
		field{Name: "path", Required: true, Check: func(p path, v *value) {
			if s, ok := c.Str(p, v); ok {
				if s == "" {
					c.Add(p, "Path cannot be empty")
					return
				}
				fpath = s
			}
		}},
		field{Name: "maskDuplicates", Check: func(p path, v *value) { dups, _ = c.Boolean(p, v) }},
	)
	before := len(c.Issues)
	if !c.Object(p, v, fields) {
		return CredentialFile{}, false
	}
	c.maskChecks(p, v, &m, "the extracted value whole")
	if fpath != "" {
		if m.Mode == "mask" && strings.HasSuffix(fpath, "/") {
			c.Add(p.Key("path"), "%s", fmt.Sprintf(`Credential mode "mask" applies to a single file, not a directory. Use mode "deny" for "%s", or point at the credential file inside it.`, fpath))
		}
		// Like filesystem.denyRead, a deny entry is inert (and not a hole)
		// when filesystem.disabled drops every filesystem rule.
		if m.Mode == "deny" && !fsDisabled {
			c.denyGlob(p.Key("path"), fpath)
		}
	}
	return CredentialFile{Path: fpath, Mode: m.Mode, Extract: m.Extract, OnExtractNoMatch: m.OnExtractNoMatch,
		Decode: m.Decode, MaskClaims: m.MaskClaims, MaskDuplicates: dups, InjectHosts: m.InjectHosts}, len(c.Issues) == before
}
