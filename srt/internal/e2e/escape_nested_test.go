//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowNestedUserNamespaces lifts seccomp filter 2 and Landlock's write
// limit (a landlocked process may not change mounts, which a nested
// sandbox must). What then keeps the mount rules is the kernel's locking
// of the mounts a less privileged mount namespace inherits (MNT_LOCKED and
// the locked read-only flag): these tests make that namespace, as the
// command would (`unshare -Urm`), and try to undo each kind of mount the
// plan makes. Root is refused the setting up front (expectRootRefused).

// nestedSettings hides a directory and a file and keeps two files
// read-only inside the writable working directory (sub, above one of them,
// is pinned so that it cannot be renamed away).
const nestedSettings = `{"denyRead":["secrets","token.txt"],"allowWrite":["."],"denyWrite":["ro.txt","sub/ro.txt"]}`

// nestedWarning starts the warning every run under the key prints.
const nestedWarning = "allowNestedUserNamespaces is on, so Landlock's write limit is off"

// TestEscapeNestedMountLocks, as the unprivileged user (root is refused the
// key, which the root run checks), tries from a namespace of the command's own to unmount a denyRead
// cover (directory and file) and a read-only bind, to move them away, to
// bind the parent of a hidden path without its children (mount(2) and
// open_tree(2)), to remount a read-only bind and the read-only root
// read-write, and to rename a pinned directory. Each is refused (EINVAL for what MNT_LOCKED protects, EPERM
// for the locked read-only flag, EBUSY for the rename), and nothing hidden
// shows. The controls
// run the same attack code on mounts the namespace made itself.
func TestEscapeNestedMountLocks(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid == 0 {
			expectRootRefused(t, w)
			return
		}
		w.write("home/proj/secrets/key", "NESTED-SECRET-DIR\n")
		token := w.write("home/proj/token.txt", "NESTED-SECRET-FILE\n")
		ro := w.write("home/proj/ro.txt", "ORIGINAL-RO\n")
		outside := w.write("home/outside.txt", "ORIGINAL-OUT\n")
		w.write("home/proj/sub/ro.txt", "ORIGINAL-SUB\n")
		secrets, key := w.path("home/proj/secrets"), w.path("home/proj/secrets/key")
		s := withTop(fsSettings(nestedSettings), `"allowNestedUserNamespaces":true`)
		nested := func(script string) probeRun {
			t.Helper()
			p := w.probeShell(s, "unshare -Urm sh -c '"+script+"'")
			if !strings.Contains(p.stderr, nestedWarning) {
				t.Fatalf("no warning that Landlock's write limit is off:\n%s", p.result)
			}
			noLeak(t, p, "NESTED-SECRET")
			return p
		}

		// Unmounting a cover: the hidden files stay hidden.
		want(t, nested(`$PROBE umount `+secrets+`; $PROBE read `+key),
			"umount", "EINVAL", "umount-detach", "EINVAL", "read", "ENOENT")
		want(t, nested(`$PROBE umount `+token+`; $PROBE read `+token),
			"umount", "EINVAL", "umount-detach", "EINVAL", "read", "EACCES")
		// Unmounting a read-only bind, and the read-only root.
		want(t, nested(`$PROBE umount `+ro+`; $PROBE write `+ro),
			"umount", "EINVAL", "umount-detach", "EINVAL", "write", "EROFS")
		want(t, nested(`$PROBE umount /; $PROBE write `+outside),
			"umount", "EINVAL", "umount-detach", "EINVAL", "write", "EROFS")
		// Moving a cover away.
		want(t, nested(`$PROBE move `+secrets+` /dev/shm/moved; $PROBE read `+key),
			"move", "EINVAL", "read", "ENOENT")
		// Binding the parent of hidden paths without its children, which
		// would show what the covers hide.
		want(t, nested(`$PROBE bind-once `+w.dir+` /dev/shm/p; $PROBE read /dev/shm/p/secrets/key`),
			"bind", "EINVAL", "read", "ENOENT")
		want(t, nested(`$PROBE open-tree `+w.dir+` /dev/shm/p`), "open-tree", "EINVAL")
		// With its children the covers come along.
		want(t, nested(`$PROBE rbind `+w.dir+` /dev/shm/p; $PROBE read /dev/shm/p/secrets/key`), "rbind", "ok", "read", "ENOENT")
		want(t, nested(`$PROBE rbind `+w.dir+` /dev/shm/p; $PROBE read /dev/shm/p/token.txt`), "rbind", "ok", "read", "EACCES")
		// Remounting read-write: the read-only flag is locked.
		want(t, nested(`$PROBE remount `+ro), "remount", "EPERM", "write", refused("EROFS"))
		want(t, nested(`$PROBE remount-rw "$(findmnt -n -o TARGET -T `+outside+`)"; $PROBE write `+outside), "remount", "EPERM", "write", refused("EROFS"))
		// Renaming a pinned directory away: its mount is copied, and so
		// is still a mount point in the nested namespace.
		want(t, nested(`$PROBE rename `+w.path("home/proj/sub")+` `+w.path("home/proj/sub2")), "rename", refused("EBUSY"))
		for f, content := range map[string]string{ro: "ORIGINAL-RO\n", outside: "ORIGINAL-OUT\n"} {
			if data, _ := os.ReadFile(f); string(data) != content {
				t.Fatalf("ESCAPE: %s changed on the host: %q", f, data)
			}
		}

		// Controls: the same attacks on mounts of the namespace's own.
		// own/hidden/f is covered by a tmpfs the namespace mounts, inside
		// own, a directory with no mount of the sandbox's beneath it.
		own := w.mkdir("home/proj/own")
		hidden := w.mkdir("home/proj/own/hidden")
		w.write("home/proj/own/hidden/f", "OWN-FILE\n")
		f := filepath.Join(hidden, "f")
		want(t, nested(`$PROBE cover `+hidden+`; $PROBE umount `+hidden+`; $PROBE read `+f),
			"cover", "ok", "umount", "ok", "read", "ok")
		want(t, nested(`$PROBE cover `+hidden+`; $PROBE move `+hidden+` /dev/shm/moved; $PROBE read `+f),
			"cover", "ok", "move", "ok", "read", "ok")
		want(t, nested(`$PROBE cover `+hidden+`; $PROBE bind-once `+own+` /dev/shm/p; $PROBE read /dev/shm/p/hidden/f`),
			"cover", "ok", "bind", "ok", "read", "ok")
		want(t, nested(`$PROBE cover `+hidden+`; $PROBE open-tree `+own+` /dev/shm/p; $PROBE read /dev/shm/p/hidden/f`),
			"cover", "ok", "open-tree", "ok", "move-mount", "ok", "read", "ok")
		want(t, nested(`$PROBE cover `+hidden+`; $PROBE rbind `+own+` /dev/shm/p; $PROBE read /dev/shm/p/hidden/f`),
			"cover", "ok", "rbind", "ok", "read", "ENOENT")
		want(t, nested(`$PROBE remount-own `+filepath.Join(own, "rw")),
			"bind", "ok", "remount-ro", "ok", "write-ro", "EROFS", "remount", "ok", "write", "ok")
		want(t, nested(`$PROBE rename `+hidden+` `+hidden+`2`), "rename", "ok")
	})
}

// expectRootRefused checks that srt refuses allowNestedUserNamespaces to
// root before anything runs, naming the key, the library's override, why
// and what to do.
func expectRootRefused(t *testing.T, w *workspace) {
	t.Helper()
	s := withTop(fsSettings(writeCwd), `"allowNestedUserNamespaces":true`)
	r := w.sh(s, "echo ran; touch ran")
	expect(t, r, 1, "srt: allowNestedUserNamespaces cannot work when srt runs as uid 0", "CAP_SETFCAP",
		"run srt as a regular user", "WithNestedUserNamespaces(true)", "!ran\n")
	if exists(w.path("home/proj/ran")) {
		t.Fatal("the command ran")
	}
}

// TestNestedSandboxes runs a nested bubblewrap and a nested srt inside the
// sandbox under allowNestedUserNamespaces, as the unprivileged user; root
// is refused the key up front. The nested srt applies its own rules inside
// (it cannot write where the outer one can), and without the key the same
// bubblewrap cannot start (the control).
func TestNestedSandboxes(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid == 0 {
			expectRootRefused(t, w)
			return
		}
		s := withTop(fsSettings(writeCwd), `"allowNestedUserNamespaces":true`)
		bw := "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all "
		expect(t, w.sh(s, bw+"true; echo status=$?"), 0, "status=0", nestedWarning)
		r := w.sh(s, bw+"sh -c 'echo from-nested-bwrap; touch nested-bwrap 2>&1; echo pid=$$'")
		expect(t, r, 0, "from-nested-bwrap", refusedText("EROFS"), "pid=2\n") // bubblewrap's own init is 1

		inner := w.write("home/inner.json", fsSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`))
		r = w.sh(s, filepath.Join(bin, "srt")+" -s "+inner+" -c 'echo from-nested-srt; touch by-nested-srt' ; echo inner=$?; touch by-outer")
		expect(t, r, 0, "from-nested-srt", refusedText("EROFS"), "inner=1")
		if exists(w.path("home/proj/by-nested-srt")) || !exists(w.path("home/proj/by-outer")) {
			t.Fatalf("the nested srt's rules did not hold, or the outer's write did not reach the host:\n%s", r)
		}

		// Control: without the key the same bubblewrap cannot make its
		// namespaces.
		r = w.sh(fsSettings(writeCwd), bw+"echo from-nested-bwrap")
		expect(t, r, 1, "!from-nested-bwrap", "!"+nestedWarning)
	})
}
