package plan

import (
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// TestBracketedDirectoryReadings is item 18 of issue 14: "vault/[v1.2]/*"
// re-opened nothing beneath the directory named "[v1.2]", which the
// reference matches too (its "[v1.2]" names that directory as well as
// one character of v, 1, . and 2). Now the entry is also the pattern "*"
// beneath the directory so named, for an allow and for a deny; the
// set reading stays. For an allow the named directory may not be a
// symlink (a sandbox could have made it); a deny follows it.
func TestBracketedDirectoryReadings(t *testing.T) {
	host := func() *fsview.Mem {
		return fsview.NewMem(map[string]string{
			"/usr/bin/bash":                    "file",
			"/home/u/proj/vault/[v1.2]/secret": "file",
			"/home/u/proj/vault/v/by-the-set":  "file",
			"/home/u/proj/vault/w/not-matched": "file",
			"/home/u/proj/keys/[a]/k.pem":      "file",
			"/home/u/proj/keys/a/k.pem":        "file",
			"/home/u/proj/keys/b/k.pem":        "file",
			"/home/u/proj/linked/[x]":          "-> ../elsewhere",
			"/home/u/proj/elsewhere/inner":     "file",
			"/home/u/proj/linked/x/by-the-set": "file",
		}).Own("/home/u", 1000, 1000)
	}
	build := func(fs string) *Plan {
		t.Helper()
		cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + fs + `}`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(Input{Config: cfg, FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, Command: []string{"/usr/bin/bash"}, StateDir: "/tmp/srt-1000"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	allow := build(`{"denyRead":["vault","linked"],"allowRead":["vault/[v1.2]/*","linked/[x]/*"],"allowWrite":[],"denyWrite":[]}`)
	deny := build(`{"denyRead":["keys/[a]/*.pem"],"allowWrite":[],"denyWrite":[]}`)
	for _, c := range []struct {
		p        *Plan
		path     string
		readable bool
	}{
		{allow, "/home/u/proj/vault/[v1.2]/secret", true}, // the finding
		{allow, "/home/u/proj/vault/v/by-the-set", true},  // the set reading stays
		{allow, "/home/u/proj/vault/w/not-matched", false},
		{allow, "/home/u/proj/elsewhere/inner", true},     // not denied at all
		{allow, "/home/u/proj/linked/x/by-the-set", true}, // the set reading
		{deny, "/home/u/proj/keys/[a]/k.pem", false},      // the deny's named reading
		{deny, "/home/u/proj/keys/a/k.pem", false},        // its set reading
		{deny, "/home/u/proj/keys/b/k.pem", true},         // the control
	} {
		if got := c.p.Readable(c.path); got != c.readable {
			t.Errorf("Readable(%s) = %v, want %v\n%s", c.path, got, c.readable, c.p)
		}
	}
	// The allow through the symlink "[x]" re-opens nothing beneath it: no
	// mount names the link or its target.
	for _, m := range allow.Mounts {
		if m.Path == "/home/u/proj/linked/[x]" || m.Path == "/home/u/proj/elsewhere" || m.Path == "/home/u/proj/elsewhere/inner" {
			t.Errorf("the allow went through the symlink [x]: %+v", m)
		}
	}
}
