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
)

// TestNestedAsUnprivilegedUser runs TestWithNestedUserNamespaces again as
// the unprivileged test user, for whom the override works (root is
// refused it).
func TestNestedAsUnprivilegedUser(t *testing.T) {
	if os.Getenv("SRT_TEST_COMPANIONS") != "" || os.Geteuid() != 0 {
		t.Skip("TestWithNestedUserNamespaces already runs as this (unprivileged) user")
	}
	name := os.Getenv("SRT_TEST_USER")
	if name == "" {
		name = "srt-test"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("unprivileged test user %q does not exist (scripts/test creates it): %v", name, err)
	}
	self, _ := os.Executable()
	bin := filepath.Join(companions, "sandbox-nested.test")
	if data, err := os.ReadFile(self); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatal("copying the test binary")
	}
	home, _ := os.MkdirTemp("", "srt-sandbox-home-")
	os.Chown(home, atoi(u.Uid), atoi(u.Gid))
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid", u.Uid, "--regid", u.Gid, "--clear-groups", "--", bin, "-test.run", "^TestWithNestedUserNamespaces$", "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, "LC_ALL=C", "SRT_TEST_COMPANIONS=" + companions}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWithNestedUserNamespaces") {
		t.Fatalf("as %s: %v\n%s", name, err, out)
	}
	t.Logf("as %s:\n%s", name, out)
}
