package settings

import (
	"math"
	"path/filepath"
	"strings"
)

// topFields is the schema of the file's top level.
func (c *checker) topFields(cfg *Config, root *value) []field {
	return withKeys("", []field{
		{Name: "network", Required: true, Check: func(p path, v *value) { c.network(p, v, cfg, root) }},
		{Name: "filesystem", Required: true, Check: func(p path, v *value) { c.filesystem(p, v, &cfg.Filesystem) }},
		{Name: "credentials", Check: func(p path, v *value) { c.credentials(p, v, cfg, root) }},
		{Name: "ignoreViolations", Check: func(p path, v *value) {
			out := map[string][]string{}
			c.Record(p, v, func(p path, v *value) {
				if s, ok := c.Strings(p, v, false); ok {
					out[p[len(p)-1]] = s
				}
			})
			cfg.IgnoreViolations = out
		}},
		{Name: "enableWeakerNestedSandbox", Check: func(p path, v *value) { cfg.EnableWeakerNestedSandbox, _ = c.Boolean(p, v) }},
		{Name: "allowNestedUserNamespaces", Check: func(p path, v *value) { cfg.AllowNestedUserNamespaces, _ = c.Boolean(p, v) }},
		{Name: "requireLandlock", Check: func(p path, v *value) { c.requireLandlock(p, v, cfg, root) }},
		{Name: "backend", Check: func(p path, v *value) { c.backend(p, v, cfg) }},
		{Name: "allowWeaker", Check: func(p path, v *value) { c.allowWeaker(p, v, cfg) }},
		{Name: "enableWeakerNetworkIsolation", Check: func(p path, v *value) { cfg.MacOS.EnableWeakerNetworkIsolation, _ = c.Boolean(p, v) }},
		{Name: "allowAppleEvents", Check: func(p path, v *value) { cfg.MacOS.AllowAppleEvents, _ = c.Boolean(p, v) }},
		{Name: "allowPty", Check: func(p path, v *value) { cfg.MacOS.AllowPty, _ = c.Boolean(p, v) }},
		{Name: "ripgrep", Check: c.ripgrep},
		{Name: "mandatoryDenySearchDepth", Check: func(p path, v *value) {
			if n, ok := c.Integer(p, v, 1, 10); ok {
				cfg.MandatoryDenySearchDepth = n
			}
		}},
		{Name: "seccomp", Check: c.seccompHelper},
		{Name: "bwrapPath", Check: func(p path, v *value) { cfg.BwrapPath, _ = c.absPath(p, v) }},
		{Name: "socatPath", Check: func(p path, v *value) { c.absPath(p, v) }},
		{Name: "javaAgentJarPath", Check: func(p path, v *value) { c.absPath(p, v) }},
		{Name: "git", Check: func(p path, v *value) {
			c.Object(p, v, []field{{Name: "safeDirectories", Check: func(p path, v *value) {
				cfg.GitSafeDirectories, _ = c.Strings(p, v, false)
			}}})
		}},
		{Name: "windows", Check: c.windows},
		{Name: "environment", Check: func(p path, v *value) { c.environment(p, v, cfg) }},
		{Name: "limits", Check: func(p path, v *value) { c.limits(p, v, &cfg.Limits) }},
	})
}

// environment checks the environment block (srt's extension): allow is a
// list of variable names, each exact or a prefix ending in "*".
func (c *checker) environment(p path, v *value, cfg *Config) {
	c.Object(p, v, []field{{Name: "allow", Required: true, Check: func(p path, v *value) {
		arr, ok := c.Array(p, v)
		if !ok {
			return
		}
		allow := []string{}
		seen := map[string]bool{}
		for i, e := range arr {
			s, ok := c.Str(p.Idx(i), e)
			if !ok {
				continue
			}
			name := strings.TrimSuffix(s, "*")
			switch {
			case s == "*":
				c.Add(p.Idx(i), "%s", `"*" would allow every variable; remove the environment block to pass the whole environment through`)
			case !isEnvName(name) || strings.Contains(name, "*"):
				c.Add(p.Idx(i), "%q is not a variable name or a prefix: use letters, digits and underscores, not starting with a digit, with an optional trailing * (\"CI_*\")", s)
			case seen[s]:
				c.Add(p.Idx(i), "%q is listed twice", s)
			default:
				seen[s] = true
				allow = append(allow, s)
			}
		}
		cfg.EnvAllow = allow
	}}})
}

// absPath checks a helper binary path.
func (c *checker) absPath(p path, v *value) (string, bool) {
	s, ok := c.Str(p, v)
	if ok && s == "" {
		c.Add(p, "Path cannot be empty") // zod reports both for ""
	}
	if ok && !filepath.IsAbs(s) {
		c.Add(p, "Binary path must be absolute")
		return "", false
	}
	return s, ok
}

func (c *checker) ripgrep(p path, v *value) {
	c.Object(p, v, []field{
		{Name: "command", Required: true, Check: func(p path, v *value) { c.Str(p, v) }},
		{Name: "args", Check: func(p path, v *value) { c.Strings(p, v, false) }},
		{Name: "argv0", Check: func(p path, v *value) { c.Str(p, v) }},
	})
}

func (c *checker) seccompHelper(p path, v *value) {
	ok := c.Object(p, v, []field{
		{Name: "applyPath", Check: func(p path, v *value) { c.Str(p, v) }},
		{Name: "argv0", Check: func(p path, v *value) { c.Str(p, v) }},
	})
	if ok && v.Get("argv0") != nil && v.Get("applyPath") == nil {
		c.Add(p.Key("argv0"), "seccompConfig.argv0 requires seccompConfig.applyPath")
	}
}

func (c *checker) windows(p path, v *value) {
	c.Object(p, v, []field{
		{Name: "backend", Check: func(p path, v *value) { c.Enum(p, v, "mxc", "srt-win") }},
		{Name: "sandboxUser", Check: func(p path, v *value) {
			if s, ok := c.NonEmptyStr(p, v); ok && len([]rune(s)) > 20 {
				c.Add(p, "Windows local usernames are limited to 20 characters")
			}
		}},
		{Name: "sublayerGuid", Check: c.uuid},
		{Name: "wfpSublayerGuid", Check: c.uuid},
		{Name: "proxyPortRange", Check: c.portRange},
		{Name: "srtWin", Check: func(p path, v *value) {
			c.Object(p, v, []field{{Name: "path", Required: true, Check: func(p path, v *value) { c.NonEmptyStr(p, v) }}})
		}},
	})
}

// portRange checks windows.proxyPortRange as the reference's zod tuple does:
// [int ≥ 1, int ≤ 65535], then, when both are numbers, low ≤ high and
// high − low ≤ 64 (so [60000, 60064] is accepted).
func (c *checker) portRange(p path, v *value) {
	arr, ok := c.Array(p, v)
	if !ok {
		return
	}
	switch {
	case len(arr) < 2:
		c.Add(p, "Array must contain at least 2 element(s)")
		return
	case len(arr) > 2:
		c.Add(p, "Array must contain at most 2 element(s)")
		return
	}
	c.Integer(p.Idx(0), arr[0], 1, math.MaxInt64)
	c.Integer(p.Idx(1), arr[1], math.MinInt64, 65535)
	if arr[0].Kind != kindNumber || arr[1].Kind != kindNumber {
		return
	}
	lo, _ := arr[0].Num.Float64() // ±Inf when out of range, as in JS
	hi, _ := arr[1].Num.Float64()
	if !(lo <= hi && hi-lo <= 64) {
		c.Add(p, "low must be ≤ high and range width ≤ 64")
	}
}

func (c *checker) uuid(p path, v *value) {
	s, ok := c.Str(p, v)
	if !ok {
		return
	}
	if !isUUID(s) {
		c.Add(p, "Invalid uuid")
	}
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
				return false
			}
		}
	}
	return true
}
