//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks on a file's metadata (mode, owner, times, extended attributes),
// which a read-only mount refuses and Landlock does not cover: every call
// that changes them, by path, by directory descriptor, through
// /proc/self/fd, and on a descriptor alone.
func init() {
	register("meta", 1, func(a []string) { metaAll(a[0]) })
	register("meta-race", 3, metaRace)
}

// metaTimes are the times the attacks set: 2001-01-01.
var metaTimes = []unix.Timespec{{Sec: 978307200}, {Sec: 978307200}}

// metaAll changes the metadata of path every way there is; each step
// reports. The mode set is 0640, the owner the probe's own, the times
// metaTimes, the extended attribute user.srt-probe.
func metaAll(path string) {
	uid, gid := os.Getuid(), os.Getgid()
	report("chmod", unix.Chmod(path, 0o640))
	report("chown", unix.Chown(path, uid, gid))
	report("lchown", unix.Lchown(path, uid, gid))
	report("utimensat", unix.UtimesNanoAt(unix.AT_FDCWD, path, metaTimes, 0))
	report("utimes", unix.Utimes(path, []unix.Timeval{{Sec: 978307200}, {Sec: 978307200}}))
	report("setxattr", unix.Setxattr(path, "user.srt-probe", []byte("x"), 0))
	report("lsetxattr", unix.Lsetxattr(path, "user.srt-probe", []byte("x"), 0))
	report("removexattr", unix.Removexattr(path, "user.srt-probe"))
	// Through a directory descriptor.
	if dir, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY, 0); report("open-dir", err) {
		name := filepath.Base(path)
		report("fchmodat", unix.Fchmodat(dir, name, 0o640, 0))
		report("fchownat", unix.Fchownat(dir, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW))
		report("utimensat-dirfd", unix.UtimesNanoAt(dir, name, metaTimes, unix.AT_SYMLINK_NOFOLLOW))
		unix.Close(dir)
	}
	// Through /proc/self/fd of an O_PATH descriptor, and that descriptor
	// with AT_EMPTY_PATH.
	if fd, err := unix.Open(path, unix.O_PATH, 0); report("open-path", err) {
		proc := "/proc/self/fd/" + strconv.Itoa(fd)
		report("chmod-proc-fd", unix.Chmod(proc, 0o640))
		report("setxattr-proc-fd", unix.Setxattr(proc, "user.srt-probe", []byte("x"), 0))
		report("fchownat-empty", unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH))
		report("utimensat-empty", unix.UtimesNanoAt(fd, "", metaTimes, unix.AT_EMPTY_PATH))
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(unsafePtr(""))), 0o640, unix.AT_EMPTY_PATH, 0, 0)
		report("fchmodat2-empty", errOf(e))
		unix.Close(fd)
	}
	// On a descriptor alone (opened for reading: a read-only mount lets
	// it be opened).
	if fd, err := unix.Open(path, unix.O_RDONLY, 0); report("open-rdonly", err) {
		report("fchmod", unix.Fchmod(fd, 0o640))
		report("fchown", unix.Fchown(fd, uid, gid))
		// futimens(3): utimensat on the descriptor, no path (x/sys's
		// Futimes goes through /proc/self/fd).
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, uintptr(unsafe.Pointer(&metaTimes[0])), 0, 0, 0)
		report("futimens", errOf(e))
		report("fsetxattr", unix.Fsetxattr(fd, "user.srt-probe", []byte("x"), 0))
		report("fremovexattr", unix.Fremovexattr(fd, "user.srt-probe"))
		unix.Close(fd)
	}
}

func unsafePtr(s string) *byte {
	p, _ := unix.BytePtrFromString(s)
	return p
}

func errOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// metaRace races a symlink against the chmod and the utimensat that
// follow it: link (in a writable directory) is renamed over, again and
// again, by a symlink to allowed and by one to refused, while the probe
// changes the mode and times of link. It reports how many calls
// succeeded and how many failed with EROFS ("ok N", "erofs N"; any other
// errno is reported by name); the test checks refused never changed.
func metaRace(a []string) {
	link, allowed, refused := a[0], a[1], a[2]
	dir := filepath.Dir(link)
	toA, toR := filepath.Join(dir, ".race-a"), filepath.Join(dir, ".race-r")
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load() && i < 1000000; i++ {
			target, tmp := allowed, toA
			if i%2 == 1 {
				target, tmp = refused, toR
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				os.Rename(tmp, link)
			}
		}
	}()
	ok, erofs, other := 0, 0, map[string]int{}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 4000 && time.Now().Before(deadline); i++ {
		var err error
		if i%2 == 0 {
			err = unix.Chmod(link, 0o600)
		} else {
			err = unix.UtimesNanoAt(unix.AT_FDCWD, link, metaTimes, 0)
		}
		switch {
		case err == nil:
			ok++
		case err == unix.EROFS:
			erofs++
		default:
			other[outcome(err)]++
		}
	}
	stop.Store(true)
	<-done
	reportWord("ok", strconv.Itoa(ok))
	reportWord("erofs", strconv.Itoa(erofs))
	for k, v := range other {
		reportWord("other-"+k, strconv.Itoa(v))
	}
}
