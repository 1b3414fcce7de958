//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// Attacks on the sandbox's mounts from a user and mount namespace of the
// command's own (allowNestedUserNamespaces; the tests start them under
// `unshare -Urm sh -c '…'`, so several run in one namespace). There the
// command has CAP_SYS_ADMIN, and only the kernel's locking of the mounts
// it inherited stands between it and what they hide or keep read-only:
// it must not unmount them, move them, bind a parent of one without its
// children (which would show what the child covers), or remount one
// read-write. cover makes a mount of the namespace's own, so that the
// controls run the same attacks where nothing is locked.
func init() {
	register("cover", 1, func(a []string) {
		report("cover", unix.Mount("tmpfs", a[0], "tmpfs", 0, "size=64k"))
	})
	register("umount", 1, func(a []string) {
		if !report("umount", unix.Unmount(a[0], 0)) {
			report("umount-detach", unix.Unmount(a[0], unix.MNT_DETACH))
		}
	})
	register("bind-once", 2, func(a []string) {
		os.MkdirAll(a[1], 0o755)
		report("bind", unix.Mount(a[0], a[1], "", unix.MS_BIND, ""))
	})
	register("rbind", 2, func(a []string) {
		os.MkdirAll(a[1], 0o755)
		report("rbind", unix.Mount(a[0], a[1], "", unix.MS_BIND|unix.MS_REC, ""))
	})
	register("move", 2, func(a []string) {
		os.MkdirAll(a[1], 0o755)
		report("move", unix.Mount(a[0], a[1], "", unix.MS_MOVE, ""))
	})
	register("open-tree", 2, openTree)
	// remount read-write of a mount point (remount's target must be one).
	register("remount-rw", 1, func(a []string) { remountRW(a[0]) })
}

// openTree is bind-once through the new mount API: a detached copy of the
// mount at src without its children (open_tree(OPEN_TREE_CLONE)), attached
// at dst.
func openTree(a []string) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, a[0], unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if !report("open-tree", err) {
		return
	}
	defer unix.Close(fd)
	os.MkdirAll(a[1], 0o755)
	report("move-mount", unix.MoveMount(fd, "", unix.AT_FDCWD, a[1], unix.MOVE_MOUNT_F_EMPTY_PATH))
}
