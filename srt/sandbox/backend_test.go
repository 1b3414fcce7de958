//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// rootWeaker is what a root caller must accept to run the Landlock
// backend (Landlock does not cover chmod).
func rootWeaker() []string {
	if os.Geteuid() == 0 {
		return []string{"root"}
	}
	return nil
}

// TestOptionsBackend: Options.Backend and Options.AllowWeaker do what the
// backend and allowWeaker keys (srt --backend, --allow-weaker) do, over
// the settings; bad values are refused naming the field.
func TestOptionsBackend(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	outside := t.TempDir()
	os.Chmod(outside, 0o777)
	fs := `"filesystem":{"denyRead":[],"allowWrite":["` + dir + `"],"denyWrite":[]}`
	// The settings ask for bubblewrap; the option wins, as the flag does.
	cfg := parse(t, `{`+noNetwork+`,`+fs+`,"backend":"bubblewrap"}`)
	var warn strings.Builder
	m := newManager(t, cfg, sandbox.Options{Backend: settings.BackendLandlock, AllowWeaker: rootWeaker(), Warnings: &warn})
	defer m.Close()
	if got := m.Layers().Backend; got != settings.BackendLandlock {
		t.Fatalf("Options.Backend landlock: the manager runs %q", got)
	}
	if n := strings.Count(warn.String(), "srt: warning: srt runs the command under its Landlock backend"); n != 1 {
		t.Errorf("want the one announcement line, got %d:\n%s", n, warn.String())
	}
	out, code := run(t, m, `echo in > `+dir+`/in && echo IN-ok; echo out > `+outside+`/out`)
	if code == 0 || !strings.Contains(out, "IN-ok") || !strings.Contains(out, outside+"/out: Read-only file system") {
		t.Errorf("under the Landlock backend: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
		t.Error("ESCAPE: a write outside allowWrite went through")
	}
	if cfg.Backend != settings.BackendBubblewrap || len(cfg.AllowWeaker) != 0 {
		t.Errorf("New changed the caller's settings: backend %q, allowWeaker %q", cfg.Backend, cfg.AllowWeaker)
	}

	// Bad values, and a root caller without "root".
	bad := []struct {
		name string
		opts sandbox.Options
		is   error
		want string
	}{
		{"unknown backend", sandbox.Options{Backend: "firejail"}, sandbox.ErrInvalidConfig, `Options.Backend "firejail" is not a backend: use "auto"`},
		{"unknown weaker name", sandbox.Options{Backend: "landlock", AllowWeaker: []string{"network", "everything"}}, sandbox.ErrInvalidConfig, `Options.AllowWeaker[1]: "everything" is not a part of the Landlock backend srt can go without: use one of "truncate"`},
	}
	if os.Geteuid() == 0 {
		bad = append(bad, struct {
			name string
			opts sandbox.Options
			is   error
			want string
		}{"root without allowWeaker root", sandbox.Options{Backend: "landlock"}, sandbox.ErrCannotSandbox, "--allow-weaker=root"})
	}
	for _, c := range bad {
		c.opts.Warnings = &warn
		m, err := sandbox.New(parse(t, `{`+noNetwork+`,`+fs+`}`), c.opts)
		if err == nil {
			m.Close()
			t.Errorf("%s: New accepted it", c.name)
			continue
		}
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %v with %q, got %v", c.name, c.is, c.want, err)
		}
	}
}

// TestAutoWithoutBubblewrap: under "auto", where bubblewrap is not
// installed (bwrapPath naming nothing), srt runs the Landlock backend and
// says why in its one line; "bubblewrap" refuses.
func TestAutoWithoutBubblewrap(t *testing.T) {
	dir := t.TempDir()
	nowhere := filepath.Join(dir, "no-bwrap")
	cfg := parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"bwrapPath":"`+nowhere+`"}`)
	var warn strings.Builder
	m := newManager(t, cfg, sandbox.Options{Backend: settings.BackendAuto, AllowWeaker: rootWeaker(), Warnings: &warn})
	defer m.Close()
	if got := m.Layers().Backend; got != settings.BackendLandlock {
		t.Fatalf("auto without bubblewrap: the manager runs %q", got)
	}
	want := "srt: warning: bubblewrap cannot be used (bubblewrap (bwrapPath " + nowhere + ") cannot be used"
	if n := strings.Count(warn.String(), "srt: warning: "); n != 1 || !strings.Contains(warn.String(), want) || !strings.Contains(warn.String(), "so srt runs the command under its Landlock backend") {
		t.Errorf("want one line %q…, got:\n%s", want, warn.String())
	}
	if out, code := run(t, m, `echo x > /etc/srt-probe 2>&1; cat /etc/passwd >/dev/null && echo READ-ok`); code != 0 || !strings.Contains(out, "/etc/srt-probe: Read-only file system") || !strings.Contains(out, "READ-ok") {
		t.Errorf("exit %d\n%s", code, out)
	}
	_, err := sandbox.New(cfg, sandbox.Options{Backend: settings.BackendBubblewrap, Warnings: &warn})
	if !errors.Is(err, sandbox.ErrMissingDependency) || !strings.Contains(err.Error(), nowhere) {
		t.Errorf("backend bubblewrap without bubblewrap: want ErrMissingDependency naming %s, got %v", nowhere, err)
	}
}

// TestOptionsBackendAsUnprivilegedUser runs both again as the
// unprivileged test user, who needs no allowWeaker.
func TestOptionsBackendAsUnprivilegedUser(t *testing.T) {
	rerunAsTestUser(t, "TestOptionsBackend", "sandbox-backend.test")
	rerunAsTestUser(t, "TestAutoWithoutBubblewrap", "sandbox-backend2.test")
}
