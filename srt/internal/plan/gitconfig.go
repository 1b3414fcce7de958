package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// maxGitConfig bounds what srt reads of a git config file.
const maxGitConfig = 1 << 20

// hooksPathProtects protects the hooks directory core.hooksPath names in
// the config file, where it is not the default one: git runs hooks from
// there instead (husky, lefthook, a shared hooks directory). A relative
// path is relative to the working tree (worktree; "" when unknown, and the
// entry is skipped). The config file itself is protected (or the user's),
// so the setting cannot be changed from inside.
func (b *builder) hooksPathProtects(configFile, worktree string) []protect {
	data, err := b.in.FS.ReadFile(configFile, maxGitConfig)
	if err != nil {
		return nil
	}
	p := gitConfigValue(string(data), "core", "hookspath")
	switch {
	case p == "":
		return nil
	case p == "~" || strings.HasPrefix(p, "~/"):
		if b.in.Home == "" {
			return nil
		}
		p = filepath.Join(b.in.Home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "~"):
		return nil // ~user: another user's home
	case !filepath.IsAbs(p):
		if worktree == "" {
			return nil
		}
		p = filepath.Join(worktree, p)
	}
	p = filepath.Clean(p)
	if fsview.IsWithin(b.in.Cwd, p) {
		b.warn("core.hooksPath in %s names %s, which holds the working directory; srt does not write-protect it, so hooks the command writes there run on the host", configFile, p)
		return nil
	}
	return []protect{{abs: p, why: "mandatory", dir: true}}
}

// globalHooksPath protects the hooks directory the user's global git
// config names: git runs its hooks in every repository.
func (b *builder) globalHooksPath() []protect {
	if b.in.Home == "" {
		return nil
	}
	var out []protect
	for _, f := range []string{".gitconfig", ".config/git/config"} {
		out = append(out, b.hooksPathProtects(filepath.Join(b.in.Home, f), "")...)
	}
	return out
}

// gitConfigValue returns the last value of section.key (both lower case)
// in a git config file, "" when there is none. It reads what git writes:
// [section] headers, key = value lines, quoted values, # and ; comments;
// includes are not followed.
func gitConfigValue(data, section, key string) string {
	cur, val := "", ""
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSpace(line[1:end]), " ")
			cur = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:]) // [core] hooksPath = x
		}
		if cur != section || line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ToLower(strings.TrimSpace(k)) != key {
			continue
		}
		val = configString(strings.TrimSpace(v))
	}
	return val
}

// configString decodes a git config value: quotes removed, a comment
// outside quotes cut, \" and \\ unescaped.
func configString(v string) string {
	var sb strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			default:
				sb.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(sb.String())
		default:
			sb.WriteByte(c)
		}
	}
	return strings.TrimSpace(sb.String())
}
