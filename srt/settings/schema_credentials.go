package settings

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/srt-sandbox/decider/policy"
	"github.com/srt-sandbox/decider/settingsfile"
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

// The credentials block's cross-field messages. Those the reference has
// are its words; the others are srt's, for contradictions the reference
// lets through or answers with a message that sends the user in a circle.
const (
	maskRequiresTLSMessage  = "Credential masking requires network.tlsTerminate so substitution runs only over a verified TLS connection. Enable tlsTerminate, or set credentials.allowPlaintextInject to opt out (not recommended)."
	maskWithMitmMessage     = "Credential masking requires network.tlsTerminate so substitution runs only over a verified TLS connection, and tlsTerminate cannot be used with network.mitmProxy. Remove mitmProxy and enable tlsTerminate, or set credentials.allowPlaintextInject to opt out (not recommended)."
	maskWithExternalMessage = "Credential masking substitutes in srt's own HTTP proxy, and network.httpProxyPort sends the sandbox's HTTP proxy connections to an external proxy instead, so no credential would ever be injected; remove httpProxyPort, or the masked entries"
	emptyInjectHostsMessage = "injectHosts is explicitly empty — the credential would be masked but never injected. Omit injectHosts to default to network.allowedDomains, or list the intended hosts."
	emptyMaskClaimsMessage  = "maskClaims is explicitly empty — no claim would ever be masked. Omit maskClaims to mask the whole token, or list the claims to protect."
	allExcludedMessage      = "This masked credential has no injectHosts, so it defaults to network.allowedDomains — but network.tlsTerminate.excludeDomains covers every allowed domain, so it could never be injected anywhere. Credential injection only runs on TLS-terminated connections."
	awsNotMaskedMessage     = "%q does not reference a credentials.envVars entry with mode \"mask\" — an AWS pair links already-masked variables; add the entry (masking is the opt-in for SigV4 re-signing)."
	awsNotWholeMessage      = "%q uses extract/decode, but an AWS pair member must be masked whole-value: the SigV4 trigger is an exact match of the fake access key id, and the signer needs the entire real value."
	awsClaimsMessage        = "%q uses maskClaims, but an AWS pair member must be masked whole-value: the SigV4 trigger is an exact match of the fake access key id, and the signer needs the entire real value. Remove maskClaims (setting decode would not do: a pair member cannot be decoded either)."
	awsTwoSlotsMessage      = "%q appears in more than one awsPairs slot (within or across pairs) — each variable can fill exactly one slot."
)

// credentials checks the credentials block: each entry's own fields while
// the object is read, then the checks across fields and blocks, in a fixed
// order whatever the order of the file's keys (envVars, files, awsPairs,
// then the network the masks need). The order is chosen so that following
// the first message never leads to one that sends the user back.
func (c *checker) credentials(p path, v *value, cfg *Config, root *value) {
	cr := &cfg.Credentials
	cr.Present = true
	var envs, files []*credEntry
	var pairs []awsPairEntry
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
				if f := c.credentialFile(p.Idx(i), e, fsDisabled); f != nil {
					files = append(files, f)
				}
			}
		}},
		{Name: "envVars", Check: func(p path, v *value) {
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			for i, e := range arr {
				if ev := c.credentialEnv(p.Idx(i), e); ev != nil {
					envs = append(envs, ev)
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
				pe := awsPairEntry{p: p.Idx(i)}
				slot := func(name string, dst *string) field {
					return field{Name: name, Check: func(p path, v *value) {
						if s, ok := c.envName(p, v); ok {
							*dst = s
							pe.slots = append(pe.slots, awsSlot{p, s})
						}
					}}
				}
				ak, sk, st := slot("accessKeyIdVar", &pe.pair.AccessKeyIDVar), slot("secretAccessKeyVar", &pe.pair.SecretAccessKeyVar), slot("sessionTokenVar", &pe.pair.SessionTokenVar)
				ak.Required, sk.Required = true, true
				c.Object(p.Idx(i), e, []field{ak, sk, st})
				pairs = append(pairs, pe)
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
	net := netLists(root)
	masks := false
	for _, list := range [][]*credEntry{envs, files} {
		for _, e := range list {
			before := len(c.Issues)
			c.maskChecks(e, net)
			e.ok = e.ok && len(c.Issues) == before
			masks = masks || e.m.Mode == "mask"
		}
	}
	c.duplicates(envs, files)
	c.awsPairs(pairs, envs)
	for _, e := range envs {
		if e.ok {
			cr.EnvVars = append(cr.EnvVars, CredentialEnv{Name: e.name, Mode: e.m.Mode, Extract: e.m.Extract, OnExtractNoMatch: e.m.OnExtractNoMatch,
				Decode: e.m.Decode, MaskClaims: e.m.MaskClaims, InjectHosts: e.m.InjectHosts})
		}
	}
	for _, f := range files {
		if f.ok {
			cr.Files = append(cr.Files, CredentialFile{Path: f.name, Mode: f.m.Mode, Extract: f.m.Extract, OnExtractNoMatch: f.m.OnExtractNoMatch,
				Decode: f.m.Decode, MaskClaims: f.m.MaskClaims, MaskDuplicates: f.dups, InjectHosts: f.m.InjectHosts})
		}
	}
	for _, pe := range pairs {
		cr.AWSPairs = append(cr.AWSPairs, pe.pair)
	}
	if !masks {
		return
	}
	// Where the masks cannot be injected at all, the message says so and
	// nothing else: "enable tlsTerminate" would lead to tlsTerminate's
	// refusal beside httpProxyPort or mitmProxy, and back here.
	switch {
	case net.httpProxyPort:
		c.Add(p, "%s", maskWithExternalMessage)
	case cr.AllowPlaintextInject || net.tls:
	case net.mitm:
		c.Add(p, "%s", maskWithMitmMessage)
	default:
		c.Add(p, "%s", maskRequiresTLSMessage)
	}
}

// netView is what the credentials checks need of the network block, read
// from the file as it is (the network block may come after credentials,
// and reports its own errors): the valid entries only.
type netView struct {
	allowed, excluded        []policy.Pattern
	tls, mitm, httpProxyPort bool
}

func netLists(root *value) netView {
	var n netView
	nv := root.Get("network")
	if nv == nil || nv.Kind != kindObject {
		return n
	}
	patterns := func(v *value, parse func(string) (policy.Pattern, error)) []policy.Pattern {
		var out []policy.Pattern
		if v == nil || v.Kind != kindArray {
			return nil
		}
		for _, e := range v.Arr {
			if e.Kind != kindString {
				continue
			}
			if pat, err := parse(e.Str); err == nil {
				out = append(out, pat)
			}
		}
		return out
	}
	n.allowed = patterns(nv.Get("allowedDomains"), policy.ParseAllowPattern)
	if t := nv.Get("tlsTerminate"); t != nil {
		n.tls = true
		if t.Kind == kindObject {
			n.excluded = patterns(t.Get("excludeDomains"), policy.ParseHostPattern)
		}
	}
	n.mitm = nv.Get("mitmProxy") != nil
	n.httpProxyPort = nv.Get("httpProxyPort") != nil
	return n
}

// covers reports whether every host b matches is matched by a, ports
// dropped (injection is per host: docs/credentials.md).
func covers(a, b policy.Pattern) bool {
	if a.DenyAll() {
		return true
	}
	switch {
	case b.IsWildcard():
		if !a.IsWildcard() {
			return false
		}
		return b.Host() == a.Host() || strings.HasSuffix(b.Host(), "."+a.Host())
	case b.IsIP():
		return a.IsIP() && a.IP() == b.IP()
	}
	return a.Match(b.Host(), a.Port())
}

func coveredBy(list []policy.Pattern, b policy.Pattern) bool {
	for _, a := range list {
		if covers(a, b) {
			return true
		}
	}
	return false
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
	// injectAt are the paths of InjectHosts' entries.
	injectAt []path
}

// credEntry is one envVars or files entry as read, for the checks across
// its fields and across entries.
type credEntry struct {
	p    path
	v    *value
	m    maskFields
	name string // the variable's name or the file's path
	file bool
	dups bool
	// ok: no issue was found in the entry.
	ok bool
}

type awsSlot struct {
	p    path
	name string
}

type awsPairEntry struct {
	p     path
	pair  AWSPair
	slots []awsSlot
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
			arr, ok := c.Array(p, v)
			if !ok {
				return
			}
			m.InjectHosts = []policy.Pattern{}
			for i, e := range arr {
				s, ok := c.Str(p.Idx(i), e)
				if !ok {
					continue
				}
				pat, err := policy.ParseHostPattern(s)
				if err != nil {
					c.Add(p.Idx(i), "%s", patternIssue(err))
					continue
				}
				m.InjectHosts = append(m.InjectHosts, pat)
				m.injectAt = append(m.injectAt, p.Idx(i))
			}
		}},
	}
}

// maskChecks runs the reference's per-entry cross-field checks, in its
// order. What masking without maskClaims covers is "the whole value" for
// a variable, "the extracted value whole" for a file, as the reference
// words it.
func (c *checker) maskChecks(e *credEntry, net netView) {
	p, v, m := e.p, e.v, &e.m
	wholeWhat := "the whole value"
	if e.file {
		wholeWhat = "the extracted value whole"
	}
	mask := m.Mode == "mask"
	// An empty injectHosts only contradicts a mask: a deny entry never
	// injects, and the reference accepts it there.
	if ih := v.Get("injectHosts"); ih != nil && ih.Kind == kindArray && len(ih.Arr) == 0 && mask {
		c.Add(p, "%s", emptyInjectHostsMessage)
	}
	if mc := v.Get("maskClaims"); mc != nil && mc.Kind == kindArray {
		if v.Get("decode") == nil {
			c.Add(p.Key("maskClaims"), "maskClaims requires decode — it names claims inside the decoded payload. Set decode (e.g. \"jwt\"), or remove maskClaims to mask %s.", wholeWhat)
		}
		if len(mc.Arr) == 0 {
			c.Add(p.Key("maskClaims"), "%s", emptyMaskClaimsMessage)
		}
	}
	if e.file && mask && strings.HasSuffix(e.name, "/") {
		c.Add(p.Key("path"), "%s", fmt.Sprintf(`Credential mode "mask" applies to a single file, not a directory. Use mode "deny" for "%s", or point at the credential file inside it.`, e.name))
	}
	if !mask {
		return
	}
	for i, h := range m.InjectHosts {
		switch {
		case !coveredBy(net.allowed, h):
			c.Add(m.injectAt[i], "injectHosts entry %q is not reachable via network.allowedDomains — add %q (or a covering wildcard) to allowedDomains, or remove it from injectHosts.", h.String(), h.String())
		case coveredBy(net.excluded, h):
			c.Add(m.injectAt[i], "injectHosts entry %q is entirely covered by network.tlsTerminate.excludeDomains. Credential injection only runs on TLS-terminated connections, so this host would receive the placeholder instead of the credential. Remove it from one of the two lists.", h.String())
		}
	}
	if v.Get("injectHosts") == nil && len(net.excluded) > 0 && len(net.allowed) > 0 {
		all := true
		for _, a := range net.allowed {
			all = all && coveredBy(net.excluded, a)
		}
		if all {
			c.Add(p, "%s", allExcludedMessage)
		}
	}
}

// duplicates refuses a variable or a file listed twice: the two entries
// would ask different things of the same secret.
func (c *checker) duplicates(envs, files []*credEntry) {
	for _, list := range [][]*credEntry{envs, files} {
		first := map[string]path{}
		for _, e := range list {
			if e.name == "" {
				continue
			}
			at, seen := first[e.name]
			if !seen {
				first[e.name] = e.p
				continue
			}
			key := "name"
			if e.file {
				key = "path"
			}
			c.Add(e.p.Key(key), "%q is already listed in %s: each one takes a single entry; remove one of the two", e.name, at.String())
			e.ok = false
		}
	}
}

// awsPairs checks that each slot names a variable masked whole, once.
func (c *checker) awsPairs(pairs []awsPairEntry, envs []*credEntry) {
	masked := map[string]*credEntry{}
	for _, e := range envs {
		if e.m.Mode == "mask" && e.name != "" {
			masked[e.name] = e
		}
	}
	used := map[string]bool{}
	for _, pe := range pairs {
		for _, s := range pe.slots {
			e := masked[s.name]
			switch {
			case used[s.name]:
				c.Add(s.p, awsTwoSlotsMessage, s.name)
			case e == nil:
				c.Add(s.p, awsNotMaskedMessage, s.name)
			case e.v.Get("extract") != nil || e.v.Get("decode") != nil:
				c.Add(s.p, awsNotWholeMessage, s.name)
			case e.v.Get("maskClaims") != nil:
				// Alone, "maskClaims requires decode" would have the user
				// set decode, which this check then refuses.
				c.Add(s.p, awsClaimsMessage, s.name)
			}
			used[s.name] = true
		}
	}
}

func (c *checker) credentialEnv(p path, v *value) *credEntry {
	e := &credEntry{p: p, v: v}
	fields := append(c.maskFieldList(&e.m), field{Name: "name", Required: true, Check: func(p path, v *value) { e.name, _ = c.envName(p, v) }})
	before := len(c.Issues)
	if !c.Object(p, v, fields) {
		return nil
	}
	e.ok = len(c.Issues) == before
	return e
}

func (c *checker) credentialFile(p path, v *value, fsDisabled bool) *credEntry {
	e := &credEntry{p: p, v: v, file: true}
	fields := append(c.maskFieldList(&e.m),
		field{Name: "path", Required: true, Check: func(p path, v *value) {
			if s, ok := c.Str(p, v); ok {
				if s == "" {
					c.Add(p, "Path cannot be empty")
					return
				}
				e.name = s
			}
		}},
		field{Name: "maskDuplicates", Check: func(p path, v *value) { e.dups, _ = c.Boolean(p, v) }},
	)
	before := len(c.Issues)
	if !c.Object(p, v, fields) {
		return nil
	}
	// Like filesystem.denyRead, a deny entry is inert (and not a hole)
	// when filesystem.disabled drops every filesystem rule.
	if e.name != "" && e.m.Mode == "deny" && !fsDisabled {
		c.denyGlob(p.Key("path"), e.name)
	}
	e.ok = len(c.Issues) == before
	return e
}

// patternIssue is the message of an injectHosts entry the pattern parser
// refused.
func patternIssue(err error) string { return settingsfile.PatternIssue(err, patternMessage) }
