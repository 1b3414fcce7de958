package settings

import (
	"math"
	"path/filepath"
)

// topFields is the schema of the file's top level.
func (c *checker) topFields(cfg *Config, root *value) []field {
	return []field{
		{name: "network", required: true, check: func(p path, v *value) { c.network(p, v, cfg, root) }},
		{name: "filesystem", required: true, check: func(p path, v *value) { c.filesystem(p, v, &cfg.Filesystem) }},
		{name: "credentials", check: func(p path, v *value) { c.credentials(p, v, cfg, root) }},
		{name: "ignoreViolations", check: func(p path, v *value) {
			out := map[string][]string{}
			c.record(p, v, func(p path, v *value) {
				if s, ok := c.strings(p, v, false); ok {
					out[p[len(p)-1]] = s
				}
			})
			cfg.IgnoreViolations = out
		}},
		{name: "enableWeakerNestedSandbox", check: func(p path, v *value) { cfg.EnableWeakerNestedSandbox, _ = c.boolean(p, v) }},
		{name: "allowNestedUserNamespaces", check: func(p path, v *value) { cfg.AllowNestedUserNamespaces, _ = c.boolean(p, v) }},
		{name: "requireLandlock", check: func(p path, v *value) { c.requireLandlock(p, v, cfg, root) }},
		{name: "enableWeakerNetworkIsolation", ignored: "macOS only", check: func(p path, v *value) { c.boolean(p, v) }},
		{name: "allowAppleEvents", ignored: "macOS only", check: func(p path, v *value) { c.boolean(p, v) }},
		{name: "allowPty", ignored: "macOS only", check: func(p path, v *value) { c.boolean(p, v) }},
		{name: "ripgrep", ignored: "configures the reference's ripgrep; srt walks the tree itself", check: c.ripgrep},
		{name: "mandatoryDenySearchDepth", check: func(p path, v *value) {
			if n, ok := c.integer(p, v, 1, 10); ok {
				cfg.MandatoryDenySearchDepth = n
			}
		}},
		{name: "seccomp", ignored: "configures the reference's seccomp helper; srt has its own", check: c.seccompHelper},
		{name: "bwrapPath", check: func(p path, v *value) { cfg.BwrapPath, _ = c.absPath(p, v) }},
		{name: "socatPath", ignored: "srt does not use socat", check: func(p path, v *value) { c.absPath(p, v) }},
		{name: "javaAgentJarPath", ignored: "srt does not ship the Java proxy agent", check: func(p path, v *value) { c.absPath(p, v) }},
		{name: "git", check: func(p path, v *value) {
			c.object(p, v, []field{{name: "safeDirectories", check: func(p path, v *value) {
				cfg.GitSafeDirectories, _ = c.strings(p, v, false)
			}}})
		}},
		{name: "windows", ignored: "Windows only", check: c.windows},
	}
}

// absPath checks a helper binary path.
func (c *checker) absPath(p path, v *value) (string, bool) {
	s, ok := c.str(p, v)
	if ok && s == "" {
		c.add(p, "Path cannot be empty") // zod reports both for ""
	}
	if ok && !filepath.IsAbs(s) {
		c.add(p, "Binary path must be absolute")
		return "", false
	}
	return s, ok
}

func (c *checker) ripgrep(p path, v *value) {
	c.object(p, v, []field{
		{name: "command", required: true, check: func(p path, v *value) { c.str(p, v) }},
		{name: "args", check: func(p path, v *value) { c.strings(p, v, false) }},
		{name: "argv0", check: func(p path, v *value) { c.str(p, v) }},
	})
}

func (c *checker) seccompHelper(p path, v *value) {
	ok := c.object(p, v, []field{
		{name: "applyPath", check: func(p path, v *value) { c.str(p, v) }},
		{name: "argv0", check: func(p path, v *value) { c.str(p, v) }},
	})
	if ok && v.get("argv0") != nil && v.get("applyPath") == nil {
		c.add(p.key("argv0"), "seccompConfig.argv0 requires seccompConfig.applyPath")
	}
}

func (c *checker) windows(p path, v *value) {
	c.object(p, v, []field{
		{name: "backend", check: func(p path, v *value) { c.enum(p, v, "mxc", "srt-win") }},
		{name: "sandboxUser", check: func(p path, v *value) {
			if s, ok := c.nonEmptyStr(p, v); ok && len([]rune(s)) > 20 {
				c.add(p, "Windows local usernames are limited to 20 characters")
			}
		}},
		{name: "sublayerGuid", check: c.uuid},
		{name: "wfpSublayerGuid", check: c.uuid},
		{name: "proxyPortRange", check: c.portRange},
		{name: "srtWin", check: func(p path, v *value) {
			c.object(p, v, []field{{name: "path", required: true, check: func(p path, v *value) { c.nonEmptyStr(p, v) }}})
		}},
	})
}

// portRange checks windows.proxyPortRange as the reference's zod tuple does:
// [int ≥ 1, int ≤ 65535], then, when both are numbers, low ≤ high and
// high − low ≤ 64 (so [60000, 60064] is accepted).
func (c *checker) portRange(p path, v *value) {
	arr, ok := c.array(p, v)
	if !ok {
		return
	}
	switch {
	case len(arr) < 2:
		c.add(p, "Array must contain at least 2 element(s)")
		return
	case len(arr) > 2:
		c.add(p, "Array must contain at most 2 element(s)")
		return
	}
	c.integer(p.idx(0), arr[0], 1, math.MaxInt64)
	c.integer(p.idx(1), arr[1], math.MinInt64, 65535)
	if arr[0].kind != kindNumber || arr[1].kind != kindNumber {
		return
	}
	lo, _ := arr[0].num.Float64() // ±Inf when out of range, as in JS
	hi, _ := arr[1].num.Float64()
	if !(lo <= hi && hi-lo <= 64) {
		c.add(p, "low must be ≤ high and range width ≤ 64")
	}
}

func (c *checker) uuid(p path, v *value) {
	s, ok := c.str(p, v)
	if !ok {
		return
	}
	if !isUUID(s) {
		c.add(p, "Invalid uuid")
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
