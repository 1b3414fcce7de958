//go:build linux

package main

import "golang.org/x/sys/unix"

// open_by_handle_at opens a file by its inode, around every mount
// ("shocker"); it needs CAP_DAC_READ_SEARCH in the initial user namespace.
func init() {
	register("open-by-handle", 1, func(a []string) {
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, a[0], 0)
		if !report("name-to-handle", err) {
			return
		}
		mfd, err := unix.Open(a[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if !report("open-mount", err) {
			return
		}
		fd, err := unix.OpenByHandleAt(mfd, h, unix.O_RDONLY)
		if err == nil {
			unix.Close(fd)
		}
		report("open-by-handle", err)
	})
}
