// Package plan turns validated settings into a sandbox plan: the ordered
// mounts, the host placeholders, the environment, the namespaces and the
// bubblewrap argument vector. Build is a pure function of its Input (the
// filesystem is read through fsview.FS), so plans are golden-tested.
//
// # The mount model
//
// Every path a rule names becomes a node. Each node gets a desired view:
//
//	unreadable directory → empty tmpfs        (--tmpfs P)
//	unreadable file      → /dev/null, nodev   (--ro-bind /dev/null P: EACCES)
//	readable, writable   → host, read-write   (--bind P P)
//	readable             → host, read-only    (--ro-bind P P)
//
// Readability is decided by the nearest read rule at or above the path
// (denyRead; allowRead and allowWrite both allow; at the same path an allow
// wins), so a deny more specific than an allow holds and an allow more
// specific than a deny re-opens. credentials.files denies have no
// exceptions. Writability needs an allowWrite at or above the path and no
// denyWrite at or above it: a denyWrite wins even over a deeper allowWrite.
//
// Nodes are mounted parents first; a node gets a mount when its view differs
// from the view it inherits, or when it must be pinned. Pins are writable
// directories above a write-protected or read-denied path: as mount points
// they cannot be renamed or removed, so `mv .git g` cannot move the
// protection away, nor `mv config c2` a denied config/secrets.env.
// Write-protected paths that do not exist get a placeholder that srt creates
// on the host and removes after the run.
//
// # Grants and symlinks
//
// A grant is on the path as written (trust.go): an allow entry through a
// symlink the caller could have made grants nothing. A grant is resolved
// once, and the mount that carries it (Mount.Grant: every host-rw mount, and
// a host-ro one inside a hidden region) records the inode it resolved to;
// the executor binds that inode by descriptor, and the init stage checks
// the writable mounts against the same inodes (Init.Writable). A deny
// follows symlinks, but not one that leads to "/" or above itself.
package plan
