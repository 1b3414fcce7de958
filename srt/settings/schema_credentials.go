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
	ok := c.object(p, v, []field{
		{name: "files", check: func(p path, v *value) {
			arr, ok := c.array(p, v)
			if !ok {
				return
			}
			fsDisabled := false
			if fsv := root.get("filesystem"); fsv != nil && fsv.kind == kindObject {
				d := fsv.get("disabled")
				fsDisabled = d != nil && d.kind == kindBool && d.boolean
			}
			for i, e := range arr {
				if f, ok := c.credentialFile(p.idx(i), e, fsDisabled); ok {
					cr.Files = append(cr.Files, f)
				}
			}
		}},
		{name: "envVars", check: func(p path, v *value) {
			arr, ok := c.array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				if ev, ok := c.credentialEnv(p.idx(i), e); ok {
					cr.EnvVars = append(cr.EnvVars, ev)
				}
			}
		}},
		{name: "allowPlaintextInject", check: func(p path, v *value) { cr.AllowPlaintextInject, _ = c.boolean(p, v) }},
		{name: "awsPairs", check: func(p path, v *value) {
			arr, ok := c.array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				var pair AWSPair
				c.object(p.idx(i), e, []field{
					{name: "accessKeyIdVar", required: true, check: func(p path, v *value) { pair.AccessKeyIDVar, _ = c.envName(p, v) }},
					{name: "secretAccessKeyVar", required: true, check: func(p path, v *value) { pair.SecretAccessKeyVar, _ = c.envName(p, v) }},
					{name: "sessionTokenVar", check: func(p path, v *value) { pair.SessionTokenVar, _ = c.envName(p, v) }},
				})
				cr.AWSPairs = append(cr.AWSPairs, pair)
			}
		}},
		{name: "sigv4", check: func(p path, v *value) {
			s := &SigV4{Streaming: "deny", Presigned: "deny", SigV4A: "deny"}
			c.object(p, v, []field{
				{name: "streaming", check: func(p path, v *value) { s.Streaming, _ = c.enum(p, v, "deny", "passthrough") }},
				{name: "presigned", check: func(p path, v *value) { s.Presigned, _ = c.enum(p, v, "deny", "passthrough") }},
				{name: "sigv4a", check: func(p path, v *value) { s.SigV4A, _ = c.enum(p, v, "deny", "passthrough") }},
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
	if masks && !cr.AllowPlaintextInject && (root.get("network") == nil || root.get("network").kind != kindObject || root.get("network").get("tlsTerminate") == nil) {
		c.add(p, "Credential masking requires network.tlsTerminate so substitution runs only over a verified TLS connection. Enable tlsTerminate, or set credentials.allowPlaintextInject to opt out (not recommended).")
	}
}

func (c *checker) envName(p path, v *value) (string, bool) {
	s, ok := c.str(p, v)
	if ok && !isEnvName(s) {
		c.add(p, "Environment variable name must start with a letter or underscore and contain only letters, digits, and underscores")
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
		{name: "mode", required: true, check: func(p path, v *value) { m.Mode, _ = c.enum(p, v, "deny", "mask") }},
		{name: "extract", check: func(p path, v *value) {
			s, ok := c.str(p, v)
			if !ok {
				return
			}
			re, err := regexp.Compile(s)
			switch {
			case err != nil:
				c.add(p, "extract is not a valid regular expression: %v", err)
			case re.NumSubexp() < 1:
				c.add(p, "%s", `extract must contain at least one capturing group — group 1 is the credential value to mask (e.g. "token:\s*(\S+)").`)
			default:
				m.Extract = s
			}
		}},
		{name: "onExtractNoMatch", check: func(p path, v *value) { m.OnExtractNoMatch, _ = c.enum(p, v, "warn", "deny", "error") }},
		{name: "decode", check: func(p path, v *value) { m.Decode, _ = c.enum(p, v, "jwt") }},
		{name: "maskClaims", check: func(p path, v *value) { m.MaskClaims, _ = c.strings(p, v, true) }},
		{name: "injectHosts", check: func(p path, v *value) {
			_, m.InjectHosts = c.patterns(p, v, parseHostPattern, patternMessage)
		}},
	}
}

// maskChecks runs the reference's per-entry cross-field checks. wholeWhat is
// what masking without maskClaims covers: "the whole value" for a variable,
// "the extracted value whole" for a file, as the reference words it.
func (c *checker) maskChecks(p path, v *value, m *maskFields, wholeWhat string) {
	// An empty injectHosts only contradicts a mask: a deny entry never
	// injects, and the reference accepts it there.
	if ih := v.get("injectHosts"); ih != nil && ih.kind == kindArray && len(ih.arr) == 0 && m.Mode == "mask" {
		c.add(p, "injectHosts is explicitly empty — the credential would be masked but never injected. Omit injectHosts to default to network.allowedDomains, or list the intended hosts.")
	}
	if mc := v.get("maskClaims"); mc != nil && mc.kind == kindArray {
		if v.get("decode") == nil {
			c.add(p.key("maskClaims"), "maskClaims requires decode — it names claims inside the decoded payload. Set decode (e.g. \"jwt\"), or remove maskClaims to mask %s.", wholeWhat)
		}
		if len(mc.arr) == 0 {
			c.add(p.key("maskClaims"), "maskClaims is explicitly empty — no claim would ever be masked. Omit maskClaims to mask the whole token, or list the claims to protect.")
		}
	}
}

func (c *checker) credentialEnv(p path, v *value) (CredentialEnv, bool) {
	var m maskFields
	var name string
	fields := append(c.maskFieldList(&m), field{name: "name", required: true, check: func(p path, v *value) { name, _ = c.envName(p, v) }})
	before := len(c.issues)
	if !c.object(p, v, fields) {
		return CredentialEnv{}, false
	}
	c.maskChecks(p, v, &m, "the whole value")
	return CredentialEnv{Name: name, Mode: m.Mode, Extract: m.Extract, OnExtractNoMatch: m.OnExtractNoMatch,
		Decode: m.Decode, MaskClaims: m.MaskClaims, InjectHosts: m.InjectHosts}, len(c.issues) == before
}

func (c *checker) credentialFile(p path, v *value, fsDisabled bool) (CredentialFile, bool) {
	var m maskFields
	var fpath string
	var dups bool
	fields := append(c.maskFieldList(&m),
		field{name: "path", required: true, check: func(p path, v *value) {
			if s, ok := c.str(p, v); ok {
				if s == "" {
					c.add(p, "Path cannot be empty")
					return
				}
				fpath = s
			}
		}},
		field{name: "maskDuplicates", check: func(p path, v *value) { dups, _ = c.boolean(p, v) }},
	)
	before := len(c.issues)
	if !c.object(p, v, fields) {
		return CredentialFile{}, false
	}
	c.maskChecks(p, v, &m, "the extracted value whole")
	if fpath != "" {
		if m.Mode == "mask" && strings.HasSuffix(fpath, "/") {
			c.add(p.key("path"), "%s", fmt.Sprintf(`Credential mode "mask" applies to a single file, not a directory. Use mode "deny" for "%s", or point at the credential file inside it.`, fpath))
		}
		// Like filesystem.denyRead, a deny entry is inert (and not a hole)
		// when filesystem.disabled drops every filesystem rule.
		if m.Mode == "deny" && !fsDisabled {
			c.denyGlob(p.key("path"), fpath)
		}
	}
	return CredentialFile{Path: fpath, Mode: m.Mode, Extract: m.Extract, OnExtractNoMatch: m.OnExtractNoMatch,
		Decode: m.Decode, MaskClaims: m.MaskClaims, MaskDuplicates: dups, InjectHosts: m.InjectHosts}, len(c.issues) == before
}
