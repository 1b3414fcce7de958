package placeholders

// Held says whether p is, right now, a placeholder a live srt run made:
// an empty file or directory that a running sandbox mounts on, not a file
// of the user's. srt reads its default settings file through it, so that a
// placeholder srt put at ~/.srt-settings.json (to keep a sandbox from
// creating one) reads as "no file" to a concurrent srt, not as an empty one.
func Held(p string) bool {
	d, err := openState(false)
	if err != nil {
		return false
	}
	defer d.close()
	for _, j := range readJournals(d) {
		if !j.alive() {
			continue
		}
		for _, e := range j.Entries {
			// Ino 0: the run has recorded it and is making it now.
			if e.Path == p && (e.Ino == 0 || sameFile(p, e)) {
				return true
			}
		}
	}
	return false
}
