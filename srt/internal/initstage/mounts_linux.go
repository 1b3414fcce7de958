package initstage

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// checkMounts refuses to go on when a writable mount of a host filesystem
// is not one srt granted (issue 10, item 7). bubblewrap resolves bind
// sources and destinations by name, even for --bind-fd (it binds the
// realpath of /proc/self/fd/N and checks the mount by its path again), so a
// concurrent sandbox that swaps a granted directory with a symlink fast
// enough can have it bind another directory, writable, and swap back
// before bubblewrap's check. The mount table of this namespace no longer
// changes once bubblewrap is done: every writable mount whose device is one
// of the host's must have as its root an inode srt granted (or be a device
// node, which bubblewrap binds into /dev).
//
// A mount's root is found by opening its mount point (names may still be
// renamed by processes outside) and accepted only when statx says the file
// opened is the root of that very mount; a mount that cannot be pinned
// down that way within the retries is refused too.
func checkMounts(s Spec) error {
	host := map[uint64]bool{}
	for _, d := range s.HostDevs {
		host[d] = true
	}
	granted := map[FileID]bool{}
	for _, id := range s.Writable {
		granted[id] = true
	}
	var unsure []MountEntry
	for attempt := 0; attempt < 50; attempt++ {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			return fmt.Errorf("checking the mounts: %w", err)
		}
		ms, err := ParseMountinfo(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("checking the mounts: %w", err)
		}
		unsure = unsure[:0]
		hidden := covered(ms)
		for _, m := range ms {
			if m.ReadOnly || !host[unix.Mkdev(m.Major, m.Minor)] || hidden[m.ID] {
				continue
			}
			id, chr, err := mountRoot(m)
			switch {
			case errors.Is(err, errStatxUnsupported):
				// A kernel limit, said on every run (docs/security.md).
				fmt.Fprintf(os.Stderr, "srt: warning: %v; a concurrent sandbox that swaps a granted directory for a symlink while this one starts could redirect the grant\n", err)
				return nil
			case err != nil:
				unsure = append(unsure, m)
			case chr:
				// /dev/null and the other nodes bubblewrap binds into its /dev
			case !granted[id]:
				return fmt.Errorf("the writable mount at %s (%s) is not one srt granted: another process replaced a granted path while the sandbox was being set up; srt runs nothing", m.MountPoint, m.Root)
			}
		}
		if len(unsure) == 0 {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("the writable mount at %s could not be identified while it was being renamed: another process is replacing a granted path; srt runs nothing", unsure[0].MountPoint)
}

var errStatxUnsupported = errors.New("this kernel's statx does not report mount IDs (Linux 5.8 and later do), so srt cannot check the sandbox's writable mounts")

// mountRoot opens m's mount point without following symlinks and returns
// the identity of the file there, if it is the root of m itself.
func mountRoot(m MountEntry) (FileID, bool, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, m.MountPoint, &how)
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Open(m.MountPoint, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		return FileID{}, false, err
	}
	defer unix.Close(fd)
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return FileID{}, false, err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 || st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return FileID{}, false, errStatxUnsupported
	}
	if st.Mnt_id != m.ID || st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return FileID{}, false, errors.New("renamed")
	}
	id := FileID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}
	return id, st.Mode&unix.S_IFMT == unix.S_IFCHR, nil
}
