package landlock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountRole is the child that mounts a tmpfs on its argument and prints
// the outcome; mountInOwnNamespace starts it in a user and mount namespace
// of its own, where it has CAP_SYS_ADMIN, so that only Landlock can refuse.
const mountRole = "mount"

// scopeProbes are run under Rules{ScopesOnly: true, ScopeAbstractUnix:
// true}: the scope holds, the filesystem is not handled, and mounts (which
// a nested bubblewrap needs) stay allowed.
var scopeProbes = []probe{
	{"create file outside", ok, func(e env) string { return write(e.o("new"), os.O_CREATE) }},
	{"open /dev/null for writing (not granted)", ok, func(env) string { return write("/dev/null", 0) }},
	{"connect to abstract socket bound outside", []string{"EPERM"}, func(e env) string { return connectAbstract(e.abstract) }},
	{"mount tmpfs in a namespace of its own", ok, func(e env) string { return mountInOwnNamespace(e.in) }},
}

// TestScopesOnlyInChild checks what allowNestedUserNamespaces relies on:
// a domain with scopes only leaves writes and mounts alone, while the same
// mount is refused under a domain that handles the filesystem (the "bare"
// role of TestRestrictInChild, whose probe list has the same mount probe).
func TestScopesOnlyInChild(t *testing.T) {
	requireLandlock(t)
	base := prepare(t)
	h, got := runChild(t, "scopes", base, listenAbstract(t))
	if len(h.Skipped) != 0 {
		t.Errorf("skipped %q: ScopesOnly must ignore write paths", h.Skipped)
	}
	for _, p := range scopeProbes {
		g := got[p.name]
		t.Logf("%-50s %s", p.name, g)
		switch {
		case h.ABI < minABI[p.name]:
			t.Logf("  (not enforceable with ABI %d; not checked)", h.ABI)
		case !slices.Contains(p.want, g):
			t.Errorf("%s: got %s, want %s", p.name, g, strings.Join(p.want, " or "))
		}
	}
}

// mountInOwnNamespace runs the mount child in a new user and mount
// namespace with CAP_SYS_ADMIN (ambient, as no uid is mapped) and returns
// what its mount(2) answered.
func mountInOwnNamespace(dir string) string {
	self, err := os.Executable()
	if err != nil {
		return err.Error()
	}
	cmd := exec.Command(self, dir)
	cmd.Env = append(os.Environ(), childEnv+"="+mountRole)
	var stderr strings.Builder
	cmd.Stderr = &stderr // not /dev/null, which a restricted child may not open for writing
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
	}
	out, err := cmd.Output()
	if err != nil {
		return fmt.Sprintf("mount child: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func mountChild() int {
	dir := filepath.Clean(os.Args[len(os.Args)-1])
	fmt.Println(errName(unix.Mount("tmpfs", dir, "tmpfs", 0, "")))
	return 0
}
