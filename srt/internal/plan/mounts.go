package plan

import (
	"fmt"
	"strings"
)

// mounts emits the mount list, parents first, and the write roots.
func (b *builder) mounts() error {
	t := b.t
	b.p.Root = HostRO
	if t.writable("/") {
		b.p.Root = HostRW
		b.p.WriteRoots = append(b.p.WriteRoots, "/")
	}
	// bubblewrap's /dev is a fresh tmpfs: writable, and home of TMPDIR.
	b.p.WriteRoots = append(b.p.WriteRoots, "/dev")
	views := map[*node]View{t.root: b.p.Root}
	for _, n := range t.ordered() {
		if n == t.root {
			continue
		}
		inherited := views[t.parentOf(n)]
		want := t.desired(n)
		views[n] = want
		hidden := inherited == Empty || inherited == NullFile
		switch {
		case hidden && (want == Empty || want == NullFile):
			views[n] = inherited // nothing of the host shows here anyway
			continue
		case !hidden && want == inherited && !n.pin:
			continue
		}
		b.p.Mounts = append(b.p.Mounts, Mount{Path: n.path, View: want, Why: strings.Join(n.why, ", ")})
		if want == HostRW || want == Empty && n.isDir {
			b.p.WriteRoots = append(b.p.WriteRoots, n.path)
		}
	}
	if len(b.p.Mounts) > MaxMounts {
		return fmt.Errorf("the filesystem rules need %d mounts, more than srt's limit of %d; narrow the patterns in denyRead, allowRead or denyWrite: %w", len(b.p.Mounts), MaxMounts, ErrTooManyMounts)
	}
	return nil
}
