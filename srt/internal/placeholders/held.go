//go:build linux

package placeholders

import "golang.org/x/sys/unix"

// Held says whether p is, right now, a placeholder of srt's: an empty file
// or directory that a sandbox mounts on, or that one did, not a file of
// the user's. srt reads its default settings file through it, so that a
// placeholder srt put at ~/.srt-settings.json (to keep a sandbox from
// creating one) reads as "no file" to a concurrent srt, not as an empty
// one. A placeholder is srt's when a run of any state directory holds its
// marker (lock.go), or when a journal of this state directory names it
// (a run that is making it, or one that ended while others still held it).
func Held(p string) bool {
	dir, base, err := openParent(p)
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	fd, in, err := openEntry(dir, base)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if markedByOther(fd, in.mode == unix.S_IFDIR) {
		return true
	}
	d, err := openState(false)
	if err != nil {
		return false
	}
	defer d.close()
	for _, j := range readJournals(d) {
		for _, e := range j.Entries {
			// Ino 0: the run has recorded it and is making it now.
			if e.Path == p && (e.Ino == 0 && j.alive() || e.id().same(in.id)) {
				return true
			}
		}
	}
	return false
}
