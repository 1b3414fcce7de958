//go:build linux

package main

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attacks that make a set-user-ID or set-group-ID file in a directory the
// sandbox may write: no_new_privs holds only inside, so on the host such a
// file runs as its owner (root, under a root-run srt) for whoever starts
// it. A file capability does the same. Each step makes or changes a file
// of its own in dir.
func init() {
	register("setid", 1, func(a []string) {
		dir := a[0]
		f := filepath.Join(dir, "probe-setid")
		os.Remove(f)
		if !report("create", os.WriteFile(f, []byte("#!/bin/sh\nid\n"), 0o755)) {
			return
		}
		report("chmod-4755", unix.Chmod(f, 0o4755))
		report("chmod-2755", unix.Chmod(f, 0o2755))
		report("fchmodat-6755", unix.Fchmodat(unix.AT_FDCWD, f, 0o6755, 0))
		if fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			report("fchmod-4755", unix.Fchmod(fd, 0o4755))
			unix.Close(fd)
		}
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, atFDCWD(), ptr(f), 0o4755, unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		report("fchmodat2-4755", errnoErr(e))
		report("open-creat-4755", create(filepath.Join(dir, "probe-setid-new"), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o4755))
		report("open-tmpfile-2755", create(dir, unix.O_TMPFILE|unix.O_WRONLY, 0o2755))
		report("mknodat-4755", unix.Mknodat(unix.AT_FDCWD, filepath.Join(dir, "probe-setid-node"), unix.S_IFREG|0o4755, 0))
		how := unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, Mode: 0o4755}
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT2, atFDCWD(), ptr(filepath.Join(dir, "probe-setid-2")), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		report("openat2-4755", errnoErr(e))
		// A file capability is the other way a file grants privileges on
		// exec: cap_setuid+ep (struct vfs_cap_data, revision 2). The kernel
		// wants CAP_SETFCAP, which bubblewrap drops.
		capData := []byte{0x01, 0x00, 0x00, 0x02, 1 << unix.CAP_SETUID, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		report("setcap-setuid", unix.Setxattr(f, "security.capability", capData, 0))
		// What stays allowed: modes without the set-id bits.
		report("chmod-0755", unix.Chmod(f, 0o755))
		report("open-creat-0644", create(filepath.Join(dir, "probe-plain"), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o644))
	})
}

func create(path string, flags int, mode uint32) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, mode)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// ptr is path as a C string for a raw syscall; the buffer stays reachable
// until the process exits.
func ptr(path string) uintptr {
	p, _ := unix.BytePtrFromString(path)
	keep = append(keep, p)
	return uintptr(unsafe.Pointer(p))
}

var keep []*byte

// atFDCWD is AT_FDCWD as a syscall word (sign-extended).
func atFDCWD() uintptr {
	fd := unix.AT_FDCWD
	return uintptr(fd)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
