//go:build linux

package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestEscapeWriteReadOnly tries to write a file the settings keep
// read-only — one under denyWrite inside allowWrite, one outside allowWrite
// — through a reopened descriptor, after chmod, and after remounting it
// read-write; the files must be unchanged on the host afterwards.
//
// Layers: the read-only bind mount refuses writes first (EROFS, checked
// when the file is opened for writing, before Landlock's file_open hook,
// which would say EACCES); mount(2) is refused by seccomp filter 2 at the
// syscall's entry (EPERM), and would be refused again by Landlock (a
// landlocked process cannot change mounts: EPERM) and by the missing
// CAP_SYS_ADMIN (EPERM).
func TestEscapeWriteReadOnly(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		denied := w.write("home/proj/ro.txt", "ORIGINAL-RO\n")
		outside := w.write("home/outside.txt", "ORIGINAL-OUT\n")
		writable := w.write("home/proj/rw.txt", "")
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["ro.txt"]}`)
		for _, f := range []string{denied, outside} {
			want(t, w.probe(s, "write", f), "write", refused("EROFS"))
			want(t, w.probe(s, "write-proc-fd", f), "open-rdonly", "ok", "reopen-wronly", refused("EROFS"))
			want(t, w.probe(s, "chmod", f), "chmod", refused("EROFS"), "write", refused("EROFS"))
			want(t, w.probe(s, "remount", f), "remount", "EPERM", "write", refused("EROFS"))
		}
		// With the namespace filter opted out (and so Landlock's write
		// limit), a namespace of the command's own still cannot make the
		// bind writable: the kernel locks a read-only flag inherited from
		// a more privileged namespace. Root is refused the key.
		if w.r.uid != 0 && !skipPart(t, "nested") {
			nested := withTop(s, `"allowNestedUserNamespaces":true`)
			want(t, w.probe(nested, "nested", "remount", denied), "nested", "ok", "remount", "EPERM", "write", refused("EROFS"))
		}
		for f, content := range map[string]string{denied: "ORIGINAL-RO\n", outside: "ORIGINAL-OUT\n"} {
			data, _ := os.ReadFile(f)
			fi, _ := os.Stat(f)
			if string(data) != content || fi.Mode().Perm() != 0o644 {
				t.Fatalf("ESCAPE: %s changed on the host: %q, mode %v", f, data, fi.Mode())
			}
		}

		// Controls: the same code writes a writable file.
		want(t, w.probe(s, "write-proc-fd", writable), "open-rdonly", "ok", "reopen-wronly", "ok")
		want(t, w.probe(s, "chmod", writable), "chmod", "ok", "write", "ok")
		if data, _ := os.ReadFile(writable); strings.Count(string(data), "PROBE-WAS-HERE") != 2 {
			t.Fatalf("control writes did not reach the host: %q", data)
		}
		// The remount code works where the probe may mount: in a
		// namespace of its own, with the namespace filter and Landlock
		// off (filesystem.disabled), on a read-only bind it made itself
		// of a directory in the working directory.
		if w.r.uid == 0 || skipPart(t, "nested") {
			return // refused the key; the user's run shows this control
		}
		own := w.mkdir("home/proj/own")
		w.write("home/proj/own/f", "")
		open := withTop(fsSettings(`{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}`), `"allowNestedUserNamespaces":true`)
		want(t, w.probe(open, "nested", "remount-own", own),
			"nested", "ok", "bind", "ok", "remount-ro", "ok", "write-ro", "EROFS", "remount", "ok", "write", "ok")
		if data, _ := os.ReadFile(own + "/f"); string(data) != "PROBE-WAS-HERE\n" {
			t.Fatalf("control remount: the write did not reach the host: %q", data)
		}
	})
}
