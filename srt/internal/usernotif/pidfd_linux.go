package usernotif

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A notification names the thread that made the call (its tid), which is
// the process's pid only for its first thread.

const (
	pidfdThread = unix.O_EXCL // PIDFD_THREAD (Linux 6.9)
	kcmpFiles   = 2           // KCMP_FILES
)

// openThread opens a pidfd whose descriptor table (pidfd_getfd) is the
// thread tid's. Since Linux 6.9 that is a pidfd of the thread itself;
// before, pidfd_open takes only a process (EINVAL for a thread of one),
// so it opens tid's process, once kcmp does not say the thread has a
// table of its own (a thread made without CLONE_FILES): then EBADF, the
// descriptor is not the process's to take.
func openThread(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err != unix.EINVAL {
		return fd, err
	}
	return openProcessOf(tid)
}

// openProcessOf opens a pidfd of tid's process, refusing a thread that
// has a descriptor table of its own (see openThread).
func openProcessOf(tid int) (int, error) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return -1, unix.ESRCH
	}
	tgid, ok := parseTgid(status)
	if !ok {
		return -1, unix.ESRCH
	}
	if tgid != tid {
		// kcmp answers 0 when both share one table.
		same, _, e := unix.Syscall6(unix.SYS_KCMP, uintptr(tid), uintptr(tgid), kcmpFiles, 0, 0, 0)
		switch {
		case e == unix.ENOSYS: // no kcmp (CONFIG_KCMP): threads share it unless made otherwise
		case e != 0:
			return -1, e
		case same != 0:
			return -1, unix.EBADF
		}
	}
	return unix.PidfdOpen(tgid, 0)
}

// parseTgid reads the Tgid line of /proc/PID/status.
func parseTgid(status []byte) (int, bool) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n, err == nil && n > 0
		}
	}
	return 0, false
}
