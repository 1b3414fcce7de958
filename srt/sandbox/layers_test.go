//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/landlock"
	"github.com/srt-sandbox/srt/settings"
)

// The kernels the decision is tested against: this machine's cannot lose
// Landlock, so the ones without it are described, as probeKernel would
// find them.
var (
	withLandlock = kernelLayers{seccompArch: "amd64", landlockABI: 7}
	oldLandlock  = kernelLayers{seccompArch: "amd64", landlockABI: 3}
	// Built in, not enabled at boot.
	landlockOff = kernelLayers{seccompArch: "amd64", landlockErr: fmt.Errorf("landlock: abi version: %w: %w", landlock.ErrUnsupported, unix.EOPNOTSUPP)}
	// Not built in.
	noLandlock = kernelLayers{seccompArch: "amd64", landlockErr: fmt.Errorf("landlock: abi version: %w: %w", landlock.ErrUnsupported, unix.ENOSYS)}
	noSeccomp  = kernelLayers{seccompArch: "amd64", seccompErr: errors.New("seccomp: this kernel installs no filters"), landlockABI: 7}
)

func cfgOf(t *testing.T, top string) *settings.Config {
	t.Helper()
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}` + top + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestLayerDecision is the decision srt takes on the host before anything
// starts: what it refuses (and as which error), what it warns about on
// every run.
func TestLayerDecision(t *testing.T) {
	nested := cfgOf(t, `,"allowNestedUserNamespaces":true`)
	required := cfgOf(t, `,"requireLandlock":true`)
	// The library can ask for what the file cannot: requireLandlock with
	// a per-command override.
	requiredNested := *required
	requiredNested.AllowNestedUserNamespaces = true
	requiredDisabled := *required
	requiredDisabled.Filesystem.Disabled = true
	disabled := *cfgOf(t, "")
	disabled.Filesystem.Disabled = true
	for _, c := range []struct {
		name    string
		cfg     *settings.Config
		k       kernelLayers
		uid     int
		err     error    // nil: accepted
		says    []string // in the error, or else in the warning
		noWarns bool
	}{
		{"landlock", cfgOf(t, ""), withLandlock, 1000, nil, nil, true},
		{"old landlock", cfgOf(t, ""), oldLandlock, 1000, nil, nil, true},
		{"no landlock warns", cfgOf(t, ""), noLandlock, 1000, nil,
			[]string{"this kernel has no Landlock", "CONFIG_SECURITY_LANDLOCK", "second write barrier is missing", `set "requireLandlock": true`, "refuse to run without it"}, false},
		{"landlock not enabled warns", cfgOf(t, ""), landlockOff, 0, nil,
			[]string{"this kernel has no Landlock", "add landlock to the lsm= kernel parameter", `"requireLandlock": true`}, false},
		{"no landlock, filesystem disabled: nothing to say", &disabled, noLandlock, 1000, nil, nil, true},
		{"requireLandlock without landlock", required, noLandlock, 1000, ErrCannotSandbox,
			[]string{"requireLandlock is set, and this kernel has no Landlock", "CONFIG_SECURITY_LANDLOCK", "remove requireLandlock"}, false},
		{"requireLandlock, landlock off at boot", required, landlockOff, 1000, ErrCannotSandbox,
			[]string{"requireLandlock is set", "lsm="}, false},
		{"requireLandlock with landlock", required, withLandlock, 1000, nil, nil, true},
		{"requireLandlock with a nested override", &requiredNested, withLandlock, 1000, ErrInvalidConfig,
			[]string{"requireLandlock cannot hold with allowNestedUserNamespaces", "WithNestedUserNamespaces(true)"}, false},
		{"requireLandlock with a disabled filesystem override", &requiredDisabled, withLandlock, 1000, ErrInvalidConfig,
			[]string{"requireLandlock cannot hold with filesystem.disabled"}, false},
		{"nested as a user warns", nested, withLandlock, 1000, nil,
			[]string{"allowNestedUserNamespaces is on, so Landlock's write limit is off", "read-only mounts alone"}, false},
		{"nested as root", nested, withLandlock, 0, ErrInvalidConfig,
			[]string{"allowNestedUserNamespaces cannot work when srt runs as uid 0", "CAP_SETFCAP", "run srt as a regular user", "WithNestedUserNamespaces(true)"}, false},
		{"kernel without seccomp filters", cfgOf(t, ""), noSeccomp, 1000, ErrCannotSandbox,
			[]string{"installs no filters", "srt needs seccomp filters"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkLayers(c.cfg, c.k, c.uid)
			warns := strings.Join(layerWarnings(c.cfg, c.k), "\n")
			if c.err == nil && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("want %v, got %v", c.err, err)
			}
			text := warns
			if err != nil {
				text = err.Error()
			}
			for _, s := range c.says {
				if !strings.Contains(text, s) {
					t.Errorf("%q lacks %q", text, s)
				}
			}
			if c.noWarns && warns != "" {
				t.Errorf("warned: %s", warns)
			}
		})
	}
}

// TestLayersFor is the report Manager.Layers gives.
func TestLayersFor(t *testing.T) {
	full := layersFor(cfgOf(t, ""), withLandlock)
	if !full.UserNamespace || full.Seccomp != "amd64" || !full.UnixSocketFilter || !full.NamespaceFilter || full.LandlockABI != 7 || !full.LandlockWrites {
		t.Errorf("default settings, ABI 7: %+v", full)
	}
	if got := strings.Join(full.LandlockCovers, "; "); !strings.Contains(got, "writing") || !strings.Contains(got, "truncating") || !strings.Contains(got, "abstract Unix sockets") {
		t.Errorf("ABI 7 covers %q", got)
	}
	if got := strings.Join(layersFor(cfgOf(t, ""), oldLandlock).LandlockCovers, "; "); strings.Contains(got, "abstract") || !strings.Contains(got, "truncating") {
		t.Errorf("ABI 3 covers %q", got)
	}
	nested := layersFor(cfgOf(t, `,"allowNestedUserNamespaces":true`), withLandlock)
	if nested.NamespaceFilter || nested.LandlockWrites || len(nested.LandlockCovers) != 1 || !strings.Contains(nested.LandlockCovers[0], "abstract") {
		t.Errorf("nested: %+v", nested)
	}
	none := layersFor(cfgOf(t, ""), noLandlock)
	if none.LandlockABI != 0 || none.LandlockWrites || len(none.LandlockCovers) != 0 || !errors.Is(none.LandlockUnavailable, unix.ENOSYS) {
		t.Errorf("no Landlock: %+v", none)
	}
	if s := none.String(); !strings.Contains(s, "no Landlock") {
		t.Errorf("String: %s", s)
	}
}

// TestCommandWithoutLandlock runs the decision through Command, with the
// kernel's answer replaced by one without Landlock (the only change made
// to the Manager): the warning goes to Options.Warnings with every
// command, and under requireLandlock Command refuses. The replaced answer
// only makes srt say more or refuse: the init stage applies Landlock
// wherever the kernel has it, whatever srt believed.
func TestCommandWithoutLandlock(t *testing.T) {
	for _, c := range []struct {
		name, top string
		err       error
	}{
		{"warns", "", nil},
		{"requireLandlock refuses", `,"requireLandlock":true`, ErrCannotSandbox},
	} {
		t.Run(c.name, func(t *testing.T) {
			var warnings bytes.Buffer
			m, err := New(cfgOf(t, c.top), Options{Warnings: &warnings})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.kernel.landlockABI == 0 {
				t.Fatalf("this kernel has no Landlock (%v); the test needs one to show the difference", m.kernel.landlockErr)
			}
			if got := m.Layers(); got.LandlockABI != m.kernel.landlockABI || !got.LandlockWrites {
				t.Fatalf("Layers on this kernel: %+v", got)
			}
			m.kernel = noLandlock
			if got := m.Layers(); got.LandlockABI != 0 || got.LandlockWrites {
				t.Fatalf("Layers without Landlock: %+v", got)
			}
			for i := 0; i < 2; i++ {
				cmd, err := m.Command(context.Background(), "true", WithDir(os.TempDir()))
				if c.err != nil {
					if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "requireLandlock is set") {
						t.Fatalf("want %v, got %v", c.err, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				cmd.Release()
			}
			if n := strings.Count(warnings.String(), "srt: warning: this kernel has no Landlock"); c.err == nil && n != 2 {
				t.Fatalf("want the warning with each of 2 commands, got %d:\n%s", n, warnings.String())
			}
		})
	}
}
