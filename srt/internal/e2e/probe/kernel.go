//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Attacks on the kernel's own files: /proc's global entries (sysctls,
// sysrq-trigger, chmod of an entry) and /sys. No attack here ever writes a
// byte: a file counts as writable when open(O_WRONLY) succeeds, and chmod
// sets the mode a file already has.
func init() {
	// kernel-walk ROOT…: every regular file under the roots that opens for
	// writing, one WRITABLE line each.
	register("kernel-walk", -1, func(a []string) { walkWritable(a) })
	// kernel-file PATH: open(O_WRONLY) and chmod to its own mode.
	register("kernel-file", 1, func(a []string) {
		report("open-write@"+a[0], openWrite(a[0]))
		report("chmod-same@"+a[0], chmodSame(a[0]))
	})
	// fresh-proc-walk: the control of kernel-walk. In user, mount, PID and
	// IPC namespaces of the probe's own making (uid 0 inside mapped to the
	// caller), a fresh proc is mounted on /proc with no covers, as
	// bubblewrap's --proc alone would leave it, and /proc/sys is walked.
	register("fresh-proc-walk", 0, func([]string) {
		uid, gid := os.Getuid(), os.Getgid()
		report("fresh-proc-namespaces", child(&syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		}, "fresh-proc-inner"))
	})
	register("fresh-proc-inner", 0, func([]string) {
		if !report("make-private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")) {
			return
		}
		if !report("mount-proc", unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")) {
			return
		}
		walkWritable([]string{"/proc/sys"})
	})
}

// walkLimits bound a walk: it must finish in seconds, whatever the host.
const (
	walkMaxEntries = 400000
	walkMaxTime    = 20 * time.Second
)

// walkWritable walks the roots without following symlinks and tries
// open(O_WRONLY) on every regular file. /proc/<pid>/task is skipped: its
// entries repeat /proc/<pid>'s, once per thread. It prints the processes
// it saw (PROC pid name), one WRITABLE line per file that opened, and the
// outcome "walk" (ok, or "truncated" past the limits).
func walkWritable(roots []string) {
	for _, pid := range pids() {
		fmt.Printf("PROC %d %s\n", pid, comm(pid))
	}
	fmt.Printf("PROC %d %s\n", os.Getpid(), comm(os.Getpid()))
	start := time.Now()
	entries, opened, truncated := 0, 0, false
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			entries++
			if entries > walkMaxEntries || time.Since(start) > walkMaxTime {
				truncated = true
				return
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.Name() == "task" && isPIDDir(dir):
			case e.Type()&os.ModeSymlink != 0:
			case e.IsDir():
				walk(p)
			case e.Type().IsRegular():
				if openWrite(p) == nil {
					opened++
					fmt.Printf("WRITABLE %s\n", p)
				}
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	note("walk: %d entries, %d writable, %s", entries, opened, time.Since(start).Round(time.Millisecond))
	if truncated {
		reportWord("walk", "truncated")
		return
	}
	reportWord("walk", "ok")
}

// isPIDDir says whether dir is /proc/<pid>.
func isPIDDir(dir string) bool {
	if filepath.Dir(dir) != "/proc" {
		return false
	}
	_, err := strconv.Atoi(filepath.Base(dir))
	return err == nil
}

// openWrite opens path for writing and closes it at once: nothing is
// written. O_NONBLOCK keeps a FIFO from blocking the walk.
func openWrite(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// chmodSame sets path's mode to the mode it has: the call succeeds only
// where the caller could set any mode, and changes nothing.
func chmodSame(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return err
	}
	return unix.Chmod(path, st.Mode&0o7777)
}
