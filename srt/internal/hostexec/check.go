package hostexec

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Sandbox is what one command's sandbox may write on the host:
// *plan.Plan.
type Sandbox interface {
	// Writable says whether the sandbox shows the host path writable, and
	// which setting makes it so.
	Writable(path string) (rule string, ok bool)
	// MountPoint says whether the path is a mount point inside, which
	// the command can neither rename nor remove.
	MountPoint(path string) bool
}

// Check refuses the program when a command in sb could have changed the
// file, or replaced an entry on the way to it and so chosen what srt runs.
// Inside, the kernel's own checks still apply: the command runs as uid
// (root's runs as root) without capabilities, so it may change what it
// owns (it may chmod it first) and what others may write.
func (p *Program) Check(sb Sandbox, uid int) error {
	for _, s := range p.steps {
		parent := filepath.Dir(s.path)
		if rule, ok := sb.Writable(parent); ok && !sb.MountPoint(s.path) && mayReplace(s.parent, s.st, uid) {
			return p.refuse("the sandbox may write %s (%s), so a sandboxed command could have put %s there", parent, rule, s.path)
		}
	}
	if len(p.steps) == 0 {
		return nil
	}
	f := p.steps[len(p.steps)-1]
	if rule, ok := sb.Writable(f.path); ok && (int(f.st.Uid) == uid || f.st.Mode&0o022 != 0) {
		return p.refuse("the sandbox may write %s (%s), so a sandboxed command could have changed it", f.path, rule)
	}
	return nil
}

// mayReplace says whether uid may rename or remove an entry of directory
// dir (and so put another in its place).
func mayReplace(dir, entry unix.Stat_t, uid int) bool {
	switch {
	case int(dir.Uid) == uid:
		return true // its owner may write it, after a chmod if need be
	case dir.Mode&0o022 == 0:
		return false
	case dir.Mode&unix.S_ISVTX != 0:
		return int(entry.Uid) == uid // sticky: only the entry's owner
	}
	return true
}
