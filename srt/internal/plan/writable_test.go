package plan

import (
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// Writable answers from the mounts the plan makes: the deepest one at or
// above a path decides, "/" last; MountPoint names what cannot be renamed.
func TestWritable(t *testing.T) {
	build := func(settingsJSON string) *Plan {
		t.Helper()
		cfg, err := settings.Parse([]byte(settingsJSON))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(Input{Config: cfg, FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000,
			Command: []string{"/usr/bin/bash"}, Helpers: []string{"/usr/local/bin/srt-init"}, StateDir: "/tmp/srt-1000"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	proj := build(`{"filesystem":{"denyRead":["./keys"],"allowWrite":[".","/tmp"],"denyWrite":["src"]},"network":{"allowedDomains":[],"deniedDomains":[]}}`)
	all := build(`{"filesystem":{"denyRead":[],"allowWrite":["/"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`)
	off := build(`{"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`)
	for _, c := range []struct {
		p    *Plan
		path string
		rule string
		ok   bool
	}{
		{proj, "/home/u/proj", "filesystem.allowWrite.0", true},
		{proj, "/home/u/proj/node_modules/.bin/bwrap", "filesystem.allowWrite.0", true},
		{proj, "/home/u/proj/src/main.go", "", false}, // denyWrite
		{proj, "/home/u/proj/keys/x.pem", "", false},  // hidden: an empty tmpfs, not the host
		{proj, "/home/u", "", false},                  // above the grant
		{proj, "/usr/bin/bwrap", "", false},           // the read-only root
		{proj, "/usr/local/bin/srt-init", "", false},  // a helper, bound read-only
		{proj, "/tmp/srt-1000/lock", "", false},       // srt's state directory
		{proj, "/tmp/other", "filesystem.allowWrite.1", true},
		{proj, "/dev/shm/x", "", false}, // the sandbox's own /dev
		{all, "/usr/bin/bwrap", "filesystem.allowWrite.0", true},
		{all, "/tmp/srt-1000", "", false},
		{off, "/usr/bin/bwrap", "filesystem.disabled", true},
		{off, "/tmp/srt-1000/run-1-1-1.json", "", false},
	} {
		rule, ok := c.p.Writable(c.path)
		if rule != c.rule || ok != c.ok {
			t.Errorf("Writable(%s) = %q, %v; want %q, %v\n%s", c.path, rule, ok, c.rule, c.ok, c.p)
		}
	}
	for path, want := range map[string]bool{"/": true, "/home/u/proj": true, "/tmp/srt-1000": true, "/tmp": true,
		"/home/u/proj/node_modules": false, "/usr/bin": false} {
		if got := proj.MountPoint(path); got != want {
			t.Errorf("MountPoint(%s) = %v, want %v", path, got, want)
		}
	}
	// A directory pinned because it holds a protected path (~/.ssh holds
	// ~/.ssh/config, ~/.local holds ~/.local/share/systemd/user) is
	// writable by the grant above it, which Writable names: the "pin"
	// mount grants nothing by itself, and a refusal that names no setting
	// ("the sandbox may write /home/u/.local ()") leaves the user guessing.
	home := build(`{"filesystem":{"denyRead":[],"allowWrite":["~"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`)
	for _, path := range []string{"/home/u", "/home/u/.ssh", "/home/u/.ssh/id_rsa", "/home/u/.local", "/home/u/.local/bin/srt-init", "/home/u/.config"} {
		if rule, ok := home.Writable(path); rule != "filesystem.allowWrite.0" || !ok {
			t.Errorf("Writable(%s) = %q, %v; want %q, true\n%s", path, rule, ok, "filesystem.allowWrite.0", home)
		}
	}
	// A helper the rules hide is bound read-only at its own path.
	hid := build(`{"filesystem":{"denyRead":["/usr/local"],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`)
	if _, ok := hid.Writable("/usr/local/bin/srt-init"); ok || !hid.MountPoint("/usr/local/bin/srt-init") {
		t.Errorf("a bound helper: writable %v, mount point %v\n%s", ok, hid.MountPoint("/usr/local/bin/srt-init"), hid)
	}
}
