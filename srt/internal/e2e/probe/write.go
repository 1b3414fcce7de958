//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// payload is what the write attacks append: the test checks the host file
// does not contain it.
const payload = "PROBE-WAS-HERE\n"

// Attacks on a file the settings make read-only, and on the pins that keep
// protected paths from being renamed away.
func init() {
	register("write", 1, func(a []string) { writeFile("write", a[0]) })
	register("write-proc-fd", 1, writeProcFD)
	register("chmod", 1, func(a []string) {
		report("chmod", unix.Chmod(a[0], 0o666))
		writeFile("write", a[0])
	})
	register("remount", 1, func(a []string) {
		remountRW(a[0])
		writeFile("write", a[0])
	})
	register("remount-own", 1, remountOwn)
	register("rename", 2, func(a []string) { report("rename", unix.Rename(a[0], a[1])) })
	register("rmdir", 1, func(a []string) { report("rmdir", unix.Rmdir(a[0])) })
}

// writeFile appends the payload to path.
func writeFile(name, path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString(payload)
		f.Close()
	}
	report(name, err)
}

// writeProcFD opens path read-only, then reopens the descriptor for writing
// through its /proc/self/fd magic link.
func writeProcFD(a []string) {
	fd, err := unix.Open(a[0], unix.O_RDONLY, 0)
	if !report("open-rdonly", err) {
		return
	}
	writeFile("reopen-wronly", "/proc/self/fd/"+strconv.Itoa(fd))
}

// remountRW is `mount -o remount,rw` of a bind mount.
func remountRW(path string) bool {
	return report("remount", remount(path, 0))
}

// remount changes a bind mount's read-only flag and keeps its other flags,
// as mount(8) does: a mount made in a less privileged namespace cannot drop
// a locked nosuid or nodev (EPERM), which must not pass for a refusal.
func remount(path string, ro uintptr) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	const keep = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME
	return unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|ro|uintptr(st.Flags)&keep, "")
}

// remountOwn is the control of remount, for a nested namespace where the
// probe has CAP_SYS_ADMIN: it binds dir read-only onto itself, shows a write
// fails, then runs the same remountRW and writes.
func remountOwn(a []string) {
	dir := a[0]
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if !report("bind", unix.Mount(dir, dir, "", unix.MS_BIND, "")) {
		return
	}
	if !report("remount-ro", remount(dir, unix.MS_RDONLY)) {
		return
	}
	writeFile("write-ro", file)
	if remountRW(dir) {
		writeFile("write", file)
	}
}
