package placeholders

import (
	"fmt"
	"os"
	"strings"
)

// runDirPrefix starts the name of a directory one srt process keeps in the
// state directory while it runs (the TLS trust bundle's), followed by the
// process's pid and start time, so that a sweep can tell when its owner is
// gone: srt-ca-<pid>-<start>-<random>.
const runDirPrefix = "srt-ca-"

// MakeRunDir creates a fresh directory (mode 0700) in the state directory
// for this process. The caller removes it when done; if the process dies
// first (SIGKILL), the next srt that sweeps removes it.
func MakeRunDir() (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	st, err := startTime(os.Getpid())
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(dir, fmt.Sprintf("%s%d-%d-", runDirPrefix, os.Getpid(), st))
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
