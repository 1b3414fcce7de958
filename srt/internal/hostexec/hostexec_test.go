package hostexec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSandbox may write beneath the paths of writable; mounts are its
// mount points.
type fakeSandbox struct{ writable, mounts []string }

func (f fakeSandbox) Writable(p string) (string, bool) {
	for _, w := range f.writable {
		if p == w || strings.HasPrefix(p, w+"/") {
			return "filesystem.allowWrite.0", true
		}
	}
	return "", false
}

func (f fakeSandbox) MountPoint(p string) bool {
	for _, m := range f.mounts {
		if m == p {
			return true
		}
	}
	return false
}

func program(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
	return p
}

func refused(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want a refusal containing %q, got %v", want, err)
	}
}

func TestResolveFollowsAndChecksEveryEntry(t *testing.T) {
	uid := os.Getuid()
	d := t.TempDir()
	os.Chmod(d, 0o755)
	os.Mkdir(filepath.Join(d, "real"), 0o755)
	os.Mkdir(filepath.Join(d, "bin"), 0o755)
	prog := program(t, filepath.Join(d, "real"), "prog", 0o755)
	os.Symlink("../real/prog", filepath.Join(d, "bin", "prog"))
	p, err := Resolve("prog", filepath.Join(d, "bin", "prog"), "fix it", uid)
	if err != nil {
		t.Fatal(err)
	}
	if p.Real != prog {
		t.Fatalf("Real = %s, want %s", p.Real, prog)
	}
	// The symlink's own directory counts: a sandbox that may write bin
	// chooses what srt runs, though the program is elsewhere.
	refused(t, p.Check(fakeSandbox{writable: []string{filepath.Join(d, "bin")}}, uid),
		"prog at "+filepath.Join(d, "bin", "prog")+": the sandbox may write "+filepath.Join(d, "bin")+" (filesystem.allowWrite.0), so a sandboxed command could have put "+filepath.Join(d, "bin", "prog")+" there; srt will not run it: fix it")
	refused(t, p.Check(fakeSandbox{writable: []string{prog}}, uid), "the sandbox may write "+prog+" (filesystem.allowWrite.0), so a sandboxed command could have changed it")
	// An entry bound in place cannot be replaced; a directory above
	// everything is not written by this sandbox.
	if err := p.Check(fakeSandbox{writable: []string{filepath.Join(d, "real")}, mounts: []string{prog}}, uid); err == nil {
		t.Fatal("the program itself is writable: want a refusal")
	}
	if err := p.Check(fakeSandbox{writable: []string{"/nonexistent"}}, uid); err != nil {
		t.Fatal(err)
	}
	// A directory of another user's, or one others may write.
	os.Chmod(filepath.Join(d, "real"), 0o777)
	_, err = Resolve("prog", prog, "fix it", uid)
	refused(t, err, "the directory "+filepath.Join(d, "real")+" is writable by other users (mode 0777); run chmod go-w on it; srt will not run it: fix it")
	os.Chmod(filepath.Join(d, "real"), 0o755)
	os.Chmod(prog, 0o757)
	_, err = Resolve("prog", prog, "fix it", uid)
	refused(t, err, prog+" is writable by other users (mode 0757)")
	os.Chmod(prog, 0o644)
	_, err = Resolve("prog", prog, "fix it", uid)
	refused(t, err, prog+" is not an executable file")
	os.Chmod(prog, 0o755)
	if uid == 0 {
		os.Lchown(prog, 65534, 65534)
		_, err = Resolve("prog", prog, "fix it", uid)
		refused(t, err, prog+" is owned by uid 65534, neither root nor uid 0 (the user srt runs as)")
	}
}

// A sticky directory others may write (/tmp) protects entries of others:
// only an entry the sandbox's user owns can be replaced there.
func TestStickyDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to own files as two users")
	}
	d := t.TempDir()
	os.Chmod(d, 0o777|os.ModeSticky)
	sub := filepath.Join(d, "sub")
	os.Mkdir(sub, 0o755)
	program(t, sub, "prog", 0o755)
	p, err := Resolve("prog", filepath.Join(sub, "prog"), "fix it", 1000)
	if err != nil {
		t.Fatal(err)
	}
	sb := fakeSandbox{writable: []string{d}}
	if err := p.Check(sb, 1000); err != nil {
		t.Fatalf("uid 1000 cannot replace root's entry of a sticky directory: %v", err)
	}
	os.Lchown(sub, 1000, 1000)
	p, _ = Resolve("prog", filepath.Join(sub, "prog"), "fix it", 1000)
	refused(t, p.Check(sb, 1000), "so a sandboxed command could have put "+sub+" there")
}

func TestResolveMissing(t *testing.T) {
	_, err := Resolve("bwrap", "/nonexistent/bwrap", "fix it", os.Getuid())
	if err == nil || errors.Is(err, ErrUntrusted) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("want a not-found error, got %v", err)
	}
}
