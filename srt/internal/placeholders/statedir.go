package placeholders

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// HaveState says whether srt's state directory exists: only then can there
// be journals of killed runs to collect.
func HaveState() bool {
	base, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return false
	}
	_, err = os.Lstat(filepath.Join(base, "srt-"+strconv.Itoa(os.Getuid())))
	return err == nil
}
