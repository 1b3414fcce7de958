package settings

import (
	"fmt"
	"strings"

	"github.com/srt-sandbox/srt/internal/glob"
)

const pathEntryMessage = `Expected a path, or { "path": "<path>", "literal": true }`

func (c *checker) filesystem(p path, v *value, fs *Filesystem) {
	c.object(p, v, []field{
		{name: "disabled", check: func(p path, v *value) { fs.Disabled, _ = c.boolean(p, v) }},
		{name: "denyRead", required: true, check: func(p path, v *value) { fs.DenyRead = c.pathEntries(p, v) }},
		{name: "allowRead", check: func(p path, v *value) { fs.AllowRead = c.pathEntries(p, v) }},
		{name: "allowWrite", required: true, check: func(p path, v *value) { fs.AllowWrite = c.pathEntries(p, v) }},
		{name: "denyWrite", required: true, check: func(p path, v *value) { fs.DenyWrite = c.pathEntries(p, v) }},
		{name: "allowGitConfig", check: func(p path, v *value) { fs.AllowGitConfig, _ = c.boolean(p, v) }},
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
				c.denyGlob(p.key(list.name).idx(i), e.Path)
			}
		}
	}
}

// pathEntries checks a list of path entries: non-empty strings, or
// {"path": "…", "literal": true} objects.
func (c *checker) pathEntries(p path, v *value) []PathEntry {
	arr, ok := c.array(p, v)
	if !ok {
		return nil
	}
	out := make([]PathEntry, 0, len(arr))
	for i, e := range arr {
		ep := p.idx(i)
		switch e.kind {
		case kindString:
			if e.str == "" {
				c.add(ep, "Path cannot be empty")
				continue
			}
			out = append(out, PathEntry{Path: e.str})
		case kindObject:
			if pe, ok := c.literalEntry(ep, e); ok {
				out = append(out, pe)
			}
		default:
			c.add(ep, pathEntryMessage)
		}
	}
	return out
}

func (c *checker) literalEntry(p path, v *value) (PathEntry, bool) {
	pv, lv := v.get("path"), v.get("literal")
	if pv == nil || pv.kind != kindString || lv == nil || lv.kind != kindBool || !lv.boolean {
		c.add(p, pathEntryMessage)
		return PathEntry{}, false
	}
	// Both problems are reported, the path's first, as zod does.
	ok := true
	if pv.str == "" {
		c.add(p.key("path"), "Path cannot be empty")
		ok = false
	}
	var unknown []string
	for _, m := range v.obj {
		if m.key != "path" && m.key != "literal" {
			unknown = append(unknown, "'"+m.key+"'")
		}
	}
	if len(unknown) > 0 {
		c.add(p, "Unrecognized key(s) in object: %s", strings.Join(unknown, ", "))
		ok = false
	}
	if !ok {
		return PathEntry{}, false
	}
	return PathEntry{Path: pv.str, Literal: true}, true
}

// denyGlob refuses a rooted deny pattern that ends in a separator: as a
// pattern it matches nothing, so the deny would silently protect nothing.
func (c *checker) denyGlob(p path, s string) {
	if !strings.HasSuffix(s, "/") || !(strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~")) || !glob.IsPattern(s) {
		return
	}
	trimmed := strings.TrimRight(s, "/")
	c.add(p, "%s", fmt.Sprintf(`Deny glob "%s" ends in a separator, so as a pattern it can match no path. Write "%s", which is also read as the path of that name where it exists, or add a "**" segment to match at any depth.`, s, trimmed))
}
