package plan

import (
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// Writable says whether a command in this sandbox may write the host path
// p (a real path: no symlinks), and names the rule that lets it: the
// deepest mount at or above p decides, and only a HostRW one shows the
// host writable. The sandbox's /dev and (without ProcBind) /proc are its
// own, not the host's. The kernel's permission checks come on top: the
// caller decides whether the command's user may write p's file.
func (p *Plan) Writable(path string) (rule string, ok bool) {
	for _, h := range p.Helpers {
		if h == path {
			return "", false
		}
	}
	if fsview.IsWithin(path, "/dev") || !p.ProcBind && fsview.IsWithin(path, "/proc") {
		return "", false
	}
	if m, ok := p.deepestMount(path); ok {
		if m.View == HostRW {
			return p.grantOf(m), true
		}
		return "", false
	}
	if p.Root == HostRW {
		return p.rootWhy, true
	}
	return "", false
}

// MountPoint says whether p is a mount point inside the sandbox: an entry
// the command can neither rename nor remove (EBUSY).
func (p *Plan) MountPoint(path string) bool {
	switch path {
	case "/", "/dev", "/proc":
		return true
	}
	for _, m := range p.Mounts {
		if m.Path == path {
			return true
		}
	}
	for _, h := range p.Helpers {
		if h == path {
			return true
		}
	}
	return false
}

// grantOf names the settings that make the writable mount m writable. A
// mount srt adds inside a grant — a pin, a directory it made above a
// placeholder, a submodule's git directory — writes only because the
// grant above it does, so the grant above is named.
func (p *Plan) grantOf(m Mount) string {
	for cur := m; ; {
		if rule := grantsOf(cur.Why); rule != "" {
			return rule
		}
		above, ok := p.deepestMount(filepath.Dir(cur.Path))
		switch {
		case cur.Path == "/" || ok && above.View != HostRW:
			return settingsOf(m.Why)
		case !ok && p.Root == HostRW:
			return p.rootWhy
		case !ok:
			return settingsOf(m.Why)
		}
		cur = above
	}
}

// grantsOf keeps the reasons in a mount's Why that grant writes: the
// allowWrite entries and the default write path.
func grantsOf(why string) string {
	var out []string
	for _, w := range strings.Split(why, ", ") {
		if strings.HasPrefix(w, "filesystem.allowWrite.") || w == "default write path" {
			out = append(out, w)
		}
	}
	return strings.Join(out, ", ")
}

// settingsOf keeps the settings a mount's Why names, without srt's own
// reasons ("pin").
func settingsOf(why string) string {
	var out []string
	for _, w := range strings.Split(why, ", ") {
		if w != "pin" {
			out = append(out, w)
		}
	}
	return strings.Join(out, ", ")
}

// Readable says whether a command in this sandbox may read the host path
// p (a real path) by name: the deepest mount at or above p decides (an
// empty tmpfs or /dev/null hides it), and with none, the root shows it.
func (p *Plan) Readable(path string) bool {
	m, ok := p.deepestMount(path)
	return !ok || m.View == HostRW || m.View == HostRO
}

// deepestMount returns the mount of the plan at or nearest above path,
// which decides what the sandbox shows there.
func (p *Plan) deepestMount(path string) (Mount, bool) {
	deepest := -1
	for i, m := range p.Mounts {
		if fsview.IsWithin(path, m.Path) && (deepest < 0 || len(m.Path) > len(p.Mounts[deepest].Path)) {
			deepest = i
		}
	}
	if deepest < 0 {
		return Mount{}, false
	}
	return p.Mounts[deepest], true
}
