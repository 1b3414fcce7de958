package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// ErrPathChanged is returned (wrapped) when a path the plan grants changed
// while the sandbox was being set up: another process is replacing it.
var ErrPathChanged = errors.New("a granted path changed while the sandbox was set up")

// mounts emits the mount list, parents first, and the write roots. Past
// srt's limit it hides whole, one at a time, the directories beneath write
// grants that hold most of them (overflow.go).
func (b *builder) mounts() error {
	for {
		if err := b.emit(); err != nil {
			return err
		}
		if len(b.p.Mounts) <= b.limits.Mounts {
			return nil
		}
		if err := b.coalesce(); err != nil {
			return err
		}
	}
}

// emit computes the mount list and the write roots from the tree.
func (b *builder) emit() error {
	t := b.t
	b.p.Mounts, b.p.WriteRoots = nil, nil
	b.p.Root = HostRO
	if t.writable("/") {
		b.p.Root = HostRW
		b.p.WriteRoots = append(b.p.WriteRoots, "/")
	}
	// bubblewrap's /dev is a fresh tmpfs: writable, and home of TMPDIR.
	b.p.WriteRoots = append(b.p.WriteRoots, "/dev")
	views := map[*node]View{t.root: b.p.Root}
	created := map[string]bool{}
	for _, ph := range b.p.Placeholders {
		created[ph.Path] = true
	}
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
		m := Mount{Path: n.path, View: want, Why: strings.Join(n.why, ", ")}
		if want == HostRW || want == HostRO && hidden {
			m.Grant = true
			if created[n.path] {
				// srt makes it just before the run: the executor takes
				// its identity from the making (Mount.Created).
				m.Created = true
			} else {
				id, err := b.identify(n)
				if err != nil {
					return err
				}
				m.ID = id
			}
		}
		b.p.Mounts = append(b.p.Mounts, m)
		if want == HostRW || want == Empty && n.isDir {
			b.p.WriteRoots = append(b.p.WriteRoots, n.path)
		}
	}
	return nil
}

// identify returns the file a grant binds: the one Build resolved the
// grant to, or, for a node no grant resolved (a pin, a path beneath a
// grant), the file there now, which must not be a symlink.
func (b *builder) identify(n *node) (FileID, error) {
	if n.conflict {
		return FileID{}, fmt.Errorf("%s: %w (it resolved to two different files)", n.path, ErrPathChanged)
	}
	if n.id != nil {
		return *n.id, nil
	}
	fi, err := b.in.FS.Lstat(n.path)
	if err != nil {
		return FileID{}, fmt.Errorf("%s: %w (%v)", n.path, ErrPathChanged, err)
	}
	id := idOf(fi)
	if id == nil || fi.Mode()&fs.ModeSymlink != 0 {
		return FileID{}, fmt.Errorf("%s: %w (it is now a symlink, or cannot be identified)", n.path, ErrPathChanged)
	}
	return *id, nil
}
