package settings

import (
	"fmt"
	"strings"

	"github.com/srt-sandbox/srt/internal/glob"
)

const pathEntryMessage = `Expected a path, or { "path": "<path>", "literal": true }`

func (c *checker) filesystem(p path, v *value, fs *Filesystem) {
	c.Object(p, v, []field{
		{Name: "disabled", Check: func(p path, v *value) { fs.Disabled, _ = c.Boolean(p, v) }},
		{Name: "denyRead", Required: true, Check: func(p path, v *value) { fs.DenyRead = c.pathEntries(p, v) }},
		{Name: "allowRead", Check: func(p path, v *value) { fs.AllowRead = c.pathEntries(p, v) }},
		{Name: "allowWrite", Required: true, Check: func(p path, v *value) { fs.AllowWrite = c.pathEntries(p, v) }},
		{Name: "denyWrite", Required: true, Check: func(p path, v *value) { fs.DenyWrite = c.pathEntries(p, v) }},
		{Name: "allowGitConfig", Check: func(p path, v *value) { fs.AllowGitConfig, _ = c.Boolean(p, v) }},
	})
	if fs.Disabled {
		return
	}
	for _, list := range []struct {
		name    string
		entries []PathEntry
	}{{"denyRead", fs.DenyRead}, {"denyWrite", fs.DenyWrite}} {
		for i, e := range list.entries {
			if !e.Literal {
				c.denyGlob(p.Key(list.name).Idx(i), e.Path)
			}
		}
	}
}

// pathEntries checks a list of path entries: non-empty strings, or
// {"path": "…", "literal": true} objects.
func (c *checker) pathEntries(p path, v *value) []PathEntry {
	arr, ok := c.Array(p, v)
	if !ok {
		return nil
	}
	out := make([]PathEntry, 0, len(arr))
	for i, e := range arr {
		ep := p.Idx(i)
		switch e.Kind {
		case kindString:
			if e.Str == "" {
				c.Add(ep, "Path cannot be empty")
				continue
			}
			out = append(out, PathEntry{Path: e.Str})
		case kindObject:
			if pe, ok := c.literalEntry(ep, e); ok {
				out = append(out, pe)
			}
		default:
			c.Add(ep, pathEntryMessage)
		}
	}
	return out
}

func (c *checker) literalEntry(p path, v *value) (PathEntry, bool) {
	pv, lv := v.Get("path"), v.Get("literal")
	if pv == nil || pv.Kind != kindString || lv == nil || lv.Kind != kindBool || !lv.Bool {
		c.Add(p, pathEntryMessage)
		return PathEntry{}, false
	}
	// Both problems are reported, the path's first, as zod does.
	ok := true
	if pv.Str == "" {
		c.Add(p.Key("path"), "Path cannot be empty")
		ok = false
	}
	var unknown []string
	for _, m := range v.Obj {
		if m.Key != "path" && m.Key != "literal" {
			unknown = append(unknown, "'"+m.Key+"'")
		}
	}
	if len(unknown) > 0 {
		c.Add(p, "Unrecognized key(s) in object: %s", strings.Join(unknown, ", "))
		ok = false
	}
	if !ok {
		return PathEntry{}, false
	}
	return PathEntry{Path: pv.Str, Literal: true}, true
}

// denyGlob refuses a rooted deny pattern that ends in a separator: as a
// pattern it matches nothing, so the deny would silently protect nothing.
func (c *checker) denyGlob(p path, s string) {
	if !strings.HasSuffix(s, "/") || !(strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~")) || !glob.IsPattern(s) {
		return
	}
	trimmed := strings.TrimRight(s, "/")
	c.Add(p, "%s", fmt.Sprintf(`Deny glob "%s" ends in a separator, so as a pattern it can match no path. Write "%s", which is also read as the path of that name where it exists, or add a "**" segment to match at any depth.`, s, trimmed))
}
