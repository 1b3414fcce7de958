package initstage

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MountEntry is one line of /proc/<pid>/mountinfo: the fields the mount
// check needs.
type MountEntry struct {
	ID         uint64 // the mount ID (statx's STATX_MNT_ID)
	Parent     uint64
	Major      uint32
	Minor      uint32
	Root       string // the mount's root within its filesystem
	MountPoint string
	ReadOnly   bool
	FSType     string
}

// ParseMountinfo reads mountinfo(5). Paths are unescaped (\040 is a space).
func ParseMountinfo(r io.Reader) ([]MountEntry, error) {
	var out []MountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// ID parent maj:min root mountpoint options [optional…] - type source superoptions
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 7 || sep < 0 || sep+1 >= len(f) {
			return nil, fmt.Errorf("mountinfo: malformed line %q", sc.Text())
		}
		id, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mountinfo: mount ID %q: %w", f[0], err)
		}
		parent, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mountinfo: parent ID %q: %w", f[1], err)
		}
		maj, min, ok := strings.Cut(f[2], ":")
		ma, err1 := strconv.ParseUint(maj, 10, 32)
		mi, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mountinfo: device %q", f[2])
		}
		out = append(out, MountEntry{
			ID: id, Parent: parent, Major: uint32(ma), Minor: uint32(mi),
			Root: unescapeMount(f[3]), MountPoint: unescapeMount(f[4]),
			ReadOnly: f[5] == "ro" || strings.HasPrefix(f[5], "ro,"),
			FSType:   f[sep+1],
		})
	}
	return out, sc.Err()
}

// unescapeMount undoes the kernel's octal escapes of space, tab, newline
// and backslash in mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// covered returns the mounts nothing can reach: those beneath a mount that
// another one was mounted on top of, at its root. bubblewrap's fresh /dev
// sits on the root of the host's /dev copied with "/", for one, and the
// host's /dev/shm and /dev/pts beneath it may have stayed writable. The
// test is structural: a mount sits on its parent's root exactly when both
// have the same mount point, whatever names change meanwhile.
func covered(ms []MountEntry) map[uint64]bool {
	byID := map[uint64]MountEntry{}
	onRoot := map[uint64]uint64{} // mount ID → the mount on top of its root
	for _, m := range ms {
		byID[m.ID] = m
	}
	for _, m := range ms {
		if p, ok := byID[m.Parent]; ok && p.ID != m.ID && p.MountPoint == m.MountPoint {
			onRoot[p.ID] = m.ID
		}
	}
	out := map[uint64]bool{}
	for _, m := range ms {
		if _, ok := onRoot[m.ID]; ok {
			out[m.ID] = true // something sits on its root
			continue
		}
		// Walk up: m is hidden if, for some ancestor a of m, the mount on
		// top of a's root is not itself on m's chain.
		chain := map[uint64]bool{m.ID: true}
		for a, ok := byID[m.Parent]; ok && !chain[a.ID]; a, ok = byID[a.Parent] {
			if top, ok := onRoot[a.ID]; ok && !chain[top] {
				out[m.ID] = true
				break
			}
			chain[a.ID] = true
		}
	}
	return out
}
