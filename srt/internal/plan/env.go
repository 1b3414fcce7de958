package plan

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// env computes the variables set and removed inside the sandbox. Everything
// else in the caller's environment is inherited.
func (b *builder) env() {
	set := func(k, v string) { b.p.Env = append(b.p.Env, EnvOp{Name: k, Value: v}) }
	b.envAllow()
	set("SANDBOX_RUNTIME", "1")
	if b.in.TmpDir != "" && !b.in.Config.Filesystem.Disabled {
		set("TMPDIR", b.in.TmpDir)
	}
	for _, e := range b.in.Config.Credentials.EnvVars {
		if e.Mode == "deny" && (b.in.Config.EnvAllow == nil || EnvAllowed(e.Name, b.in.Config.EnvAllow)) {
			b.p.Env = append(b.p.Env, EnvOp{Name: e.Name, Unset: true})
		}
	}
	b.gitSafeDirectories(set)
	b.proxyEnv(set)
	if b.in.TrustBundle != "" {
		for _, k := range TrustVars {
			set(k, TrustBundlePath)
		}
	}
}

// envAllow removes, under the environment block, every variable of the
// caller's environment that its allow list does not name, and leaves the
// rest in b.in.Env for what follows (git's count, credential masks).
func (b *builder) envAllow() {
	allow := b.in.Config.EnvAllow
	if allow == nil {
		return
	}
	var kept []string
	gone := map[string]bool{}
	for _, kv := range b.in.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		// SRT_DEBUG is srt's own: the init stage reads it for its debug
		// lines.
		if name == "SRT_DEBUG" || EnvAllowed(name, allow) {
			kept = append(kept, kv)
			continue
		}
		if !gone[name] {
			gone[name] = true
			b.p.Env = append(b.p.Env, EnvOp{Name: name, Unset: true})
		}
	}
	b.in.Env = kept
}

// EnvAllowed says whether the environment block's allow list names the
// variable: an entry equal to it, or an entry "PREFIX*" it starts with.
func EnvAllowed(name string, allow []string) bool {
	for _, a := range allow {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// maxSafeDirectories: past this many, one safe.directory=* is set instead
// of two entries per directory.
const maxSafeDirectories = 8

// gitSafeDirectories marks git.safeDirectories as safe for git through
// GIT_CONFIG_COUNT/KEY_n/VALUE_n, continuing an inherited count; an
// inherited GIT_CONFIG_COUNT=0 opts out.
func (b *builder) gitSafeDirectories(set func(k, v string)) {
	dirs := b.in.Config.GitSafeDirectories
	if len(dirs) == 0 {
		return
	}
	start := 0
	if v, ok := lookupEnv(b.in.Env, "GIT_CONFIG_COUNT"); ok {
		n, err := strconv.Atoi(v)
		if err == nil && n == 0 {
			b.note("GIT_CONFIG_COUNT=0: git.safeDirectories not applied")
			return
		}
		if err == nil && n > 0 {
			start = n
		}
	}
	var values []string
	if len(dirs) > maxSafeDirectories {
		values = []string{"*"}
	} else {
		for _, d := range dirs {
			d = b.absolute(d)
			values = append(values, d)
			if d == "/" {
				values = append(values, "/*")
			} else {
				values = append(values, d+"/*")
			}
		}
	}
	for i, v := range values {
		set(fmt.Sprintf("GIT_CONFIG_KEY_%d", start+i), "safe.directory")
		set(fmt.Sprintf("GIT_CONFIG_VALUE_%d", start+i), v)
	}
	set("GIT_CONFIG_COUNT", strconv.Itoa(start+len(values)))
}

func (b *builder) absolute(p string) string { return filepath.Clean(b.expand(p)) }

// expand makes p absolute: "~" and "~/…" from the home directory, a
// relative path from the working directory.
func (b *builder) expand(p string) string {
	if p == "~" {
		p = b.in.Home
	} else if strings.HasPrefix(p, "~/") {
		p = b.in.Home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(b.in.Cwd, p)
	}
	return p
}

func lookupEnv(env []string, k string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
}
