//go:build linux

package e2e

import (
	"testing"
)

// TestEscapeNamespaces tries to get a user or mount namespace of the
// command's own (where it would have CAP_SYS_ADMIN over mounts), to mount,
// to pivot_root, to join another namespace and to open a file by handle
// around the mounts.
//
// Layers, in the order they fire: seccomp filter 2 at the syscall's entry
// (EPERM; ENOSYS for clone3, whose flags it cannot read); then Landlock,
// which refuses every mount change by a landlocked process (EPERM); then
// the missing capabilities in the sandbox's user namespace (EPERM). Under
// allowNestedUserNamespaces only the last holds, and the kernel's locking
// of inherited mounts (escape_nested_test.go).
// /proc/1/ns/* cannot even be opened: the init stage is not dumpable
// (EACCES).
func TestEscapeNamespaces(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(writeCwd)
		for _, c := range []struct {
			args  []string
			steps []string
		}{
			// `unshare -r` and `unshare -m`.
			{[]string{"unshare", "user"}, []string{"unshare-user", "EPERM"}},
			{[]string{"unshare", "mnt"}, []string{"unshare-mnt", "EPERM"}},
			{[]string{"clone", "user"}, []string{"clone-user", "EPERM"}},
			{[]string{"clone", "mnt"}, []string{"clone-mnt", "EPERM"}},
			{[]string{"clone", "user+mnt"}, []string{"clone-user+mnt", "EPERM"}},
			{[]string{"clone3", "user"}, []string{"clone3-user", "ENOSYS"}},
			{[]string{"mount-bind", "/dev/shm", w.dir}, []string{"mount-bind", "EPERM"}},
			{[]string{"pivot-root", "/dev/shm"}, []string{"chdir", "ok", "pivot-root", "EPERM"}},
			{[]string{"setns", "/proc/1/ns/mnt"}, []string{"setns-open", "EACCES"}},
			{[]string{"setns", "/proc/self/ns/mnt"}, []string{"setns-open", "ok", "setns", "EPERM"}},
			{[]string{"setns", "/proc/self/ns/net"}, []string{"setns-open", "ok", "setns", "EPERM"}},
			// open_by_handle_at needs CAP_DAC_READ_SEARCH in the initial
			// user namespace; getting a handle is allowed.
			{[]string{"open-by-handle", w.dir}, []string{"name-to-handle", "ok", "open-mount", "ok", "open-by-handle", "EPERM"}},
			{[]string{"nested", "noop"}, []string{"nested", "EPERM"}},
		} {
			want(t, w.probe(s, c.args...), c.steps...)
		}
		// open_by_handle_at works for root outside any namespace.
		if w.r.uid == 0 {
			want(t, w.hostProbe("open-by-handle", w.dir), "open-by-handle", "ok")
		}

		// Control: with allowNestedUserNamespaces the same calls make
		// namespaces, and the probe's mount code works in one of its own.
		// Root is refused the key (escape_nested_test.go).
		if w.r.uid == 0 {
			expectRootRefused(t, w)
			return
		}
		n := withTop(s, `"allowNestedUserNamespaces":true`)
		want(t, w.probe(n, "unshare", "user"), "unshare-user", "ok")
		want(t, w.probe(n, "clone", "user"), "clone-user", "ok")
		want(t, w.probe(n, "clone", "user+mnt"), "clone-user+mnt", "ok")
		want(t, w.probe(n, "clone3", "user"), "clone3-user", "ok")
		// A mount namespace needs CAP_SYS_ADMIN: the command has it only
		// in a user namespace of its own.
		want(t, w.probe(n, "unshare", "mnt"), "unshare-mnt", "EPERM")
		want(t, w.probe(n, "nested", "unshare", "mnt"), "nested", "ok", "unshare-mnt", "ok")
		want(t, w.probe(n, "nested", "setns", "/proc/self/ns/net"), "nested", "ok", "setns-open", "ok", "setns", "ok")
		// The opt-out keeps no Landlock write limit (a landlocked process
		// may not change mounts), so the probe mounts and pivots in its
		// own namespace: its mount code is real. What it may not undo
		// there is in escape_nested_test.go.
		want(t, w.probe(n, "nested", "mount-bind", "/dev/shm", w.dir), "nested", "ok", "mount-bind", "ok")
		want(t, w.probe(n, "nested", "pivot-root-own", "/dev/shm/newroot"),
			"nested", "ok", "make-private", "ok", "bind", "ok", "chdir", "ok", "pivot-root", "ok")
	})
}
