//go:build linux

package placeholders

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/kernrand"
)

// runDirPrefix starts the name of a directory one srt process keeps in the
// state directory while it runs (the TLS trust bundle's), followed by the
// process's pid and start time, so that a sweep can tell when its owner is
// gone: srt-ca-<pid>-<start>-<random>.
const runDirPrefix = "srt-ca-"

// MakeRunDir creates a fresh directory (mode 0700) in the state directory
// for this process. The caller removes it with RemoveRunDir when done; if
// the process dies first (SIGKILL), the next srt that sweeps removes it.
func MakeRunDir() (string, error) {
	d, err := openState(true)
	if err != nil {
		return "", err
	}
	defer d.close()
	st, err := startTime(os.Getpid())
	if err != nil {
		return "", err
	}
	for {
		var b [8]byte
		kernrand.Fill(b[:])
		name := fmt.Sprintf("%s%d-%d-%s", runDirPrefix, os.Getpid(), st, hex.EncodeToString(b[:]))
		err := unix.Mkdirat(d.fd, name, 0o700)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("state directory %s: %w", d.path, err)
		}
		return filepath.Join(d.path, name), nil
	}
}

// RemoveRunDir removes a directory MakeRunDir made, and everything in it,
// relative to the state directory and following no symlink.
func RemoveRunDir(p string) error {
	d, err := openState(false)
	if err != nil {
		return err
	}
	defer d.close()
	name := filepath.Base(p)
	if filepath.Dir(p) != d.path || !strings.HasPrefix(name, runDirPrefix) {
		return fmt.Errorf("%s is not a run directory of %s", p, d.path)
	}
	if st, err := d.lstat(name); err != nil || !ours(st, unix.S_IFDIR) {
		return err
	}
	return removeTree(d.fd, name)
}

// isRunDir reports whether a state-directory entry is a run directory, and
// whose.
func isRunDir(name string) (pid int, start uint64, ok bool) {
	if !strings.HasPrefix(name, runDirPrefix) {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(name, runDirPrefix+"%d-%d-", &pid, &start)
	return pid, start, err == nil
}
