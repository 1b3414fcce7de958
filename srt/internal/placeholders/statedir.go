package placeholders

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StateDir returns srt's per-user state directory, $TMPDIR/srt-<uid>,
// creating it. It refuses a directory it does not own or that others can
// enter, which would let them plant journals.
func StateDir() (string, error) {
	uid := os.Getuid()
	base, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", fmt.Errorf("temporary directory %s: %w", os.TempDir(), err)
	}
	dir := filepath.Join(base, "srt-"+strconv.Itoa(uid))
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("state directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("state directory %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != uid || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("state directory %s is not a directory owned by uid %d with mode 0700; remove it", dir, uid)
	}
	return dir, nil
}

// HaveJournals says whether srt's state directory holds journals or run
// directories: only then can there be placeholders or run directories of
// killed runs to collect. It is one directory read, cheap enough for every
// start.
func HaveJournals() bool {
	f, err := os.Open(filepath.Join(os.TempDir(), "srt-"+strconv.Itoa(os.Getuid())))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		if strings.HasPrefix(n, "run-") || strings.HasPrefix(n, runDirPrefix) {
			return true
		}
	}
	return false
}
