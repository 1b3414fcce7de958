//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/internal/backendtest"
)

// TestNestedAsUnprivilegedUser runs TestWithNestedUserNamespaces again as
// the unprivileged test user, for whom the override works (root is
// refused it).
func TestNestedAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestWithNestedUserNamespaces", "sandbox-nested.test")
}

// rerunAsTestUser runs the test named again, in a copy of this test
// binary (name) that the unprivileged test user can run, as that user,
// and fails unless it passes there. It skips where there is nothing to
// add: not root (the test already ran as a user), or in that run itself.
func rerunAsTestUser(t *testing.T, test, name string) {
	t.Helper()
	if os.Getenv("SRT_TEST_COMPANIONS") != "" {
		t.Skip("this is the unprivileged run itself")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: " + test + " already ran as this (unprivileged) user")
	}
	who := os.Getenv("SRT_TEST_USER")
	if who == "" {
		who = "srt-test"
	}
	u, err := user.Lookup(who)
	if err != nil {
		t.Fatalf("unprivileged test user %q does not exist (scripts/test creates it): %v", who, err)
	}
	self, _ := os.Executable()
	bin := filepath.Join(companions, name)
	if data, err := os.ReadFile(self); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatal("copying the test binary")
	}
	home, _ := os.MkdirTemp("", "srt-sandbox-home-")
	os.Chown(home, atoi(u.Uid), atoi(u.Gid))
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid", u.Uid, "--regid", u.Gid, "--clear-groups", "--", bin, "-test.run", "^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, "LC_ALL=C", "SRT_TEST_COMPANIONS=" + companions, "SRT_TEST_BACKEND=" + os.Getenv("SRT_TEST_BACKEND")}
	out, err := cmd.CombinedOutput()
	if err == nil && backendtest.Landlock && strings.Contains(string(out), "--- SKIP: "+test) {
		t.Skipf("as %s: %s", who, out) // the table's reason, under the Landlock backend
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("as %s: %v\n%s", who, err, out)
	}
	t.Logf("as %s:\n%s", who, out)
}
