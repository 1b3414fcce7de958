package plan

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/settings"
)

// TestMissingPathsWarned is item 9 of issue 14: an allowWrite or denyRead
// path that does not exist was accepted silently (a debug note only), so
// a typo in allowWrite showed only as "Read-only file system". Each list
// with such entries gets one warning naming them; what srt adds itself
// (the default write path, the mandatory protections, here all missing),
// patterns that match nothing and allowRead entries get none. The
// control: the same lists with existing paths warn about nothing.
func TestMissingPathsWarned(t *testing.T) {
	build := func(fs, credential string) *Plan {
		t.Helper()
		cfg, err := settings.Parse([]byte(`{"filesystem":` + fs + `,"network":{"allowedDomains":[],"deniedDomains":[]},
			"credentials":{"files":[{"path":"` + credential + `","mode":"deny"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		in := Input{Config: cfg, FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000,
			Command: []string{"/usr/bin/bash"}, StateDir: "/tmp/srt-1000"}
		p, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := build(`{"denyRead":["~/.asw","./**/*.nothing","~/.ssh"],"allowRead":["~/.asw/config"],"allowWrite":[".","./buidl","/nowhere/x"],"denyWrite":["./not-yet"]}`, "~/.gone/token")
	want := []string{
		`filesystem.allowWrite names paths that do not exist, so they grant nothing; make them before srt starts (a path made later stays read-only in the sandbox), or correct the entries: "./buidl" (/home/u/proj/buidl), "/nowhere/x" (/nowhere/x)`,
		`filesystem.denyRead names paths that do not exist, so they hide nothing; a path made while the sandbox runs is readable in it, so correct an entry with a typo: "~/.asw" (/home/u/.asw)`,
		`credentials.files names paths that do not exist, so they hide nothing; a path made while the sandbox runs is readable in it, so correct an entry with a typo: "~/.gone/token" (/home/u/.gone/token)`,
	}
	var got []string
	for _, w := range p.Warnings {
		if strings.Contains(w, "do not exist") {
			got = append(got, w)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings about missing paths:\n got %q\nwant %q", got, want)
	}
	for _, w := range p.Warnings {
		for _, quiet := range []string{"*.nothing", "not-yet", "allowRead", ".npm", ".bashrc", ".gitmodules"} {
			if strings.Contains(w, quiet) {
				t.Errorf("a warning names %s: %s", quiet, w)
			}
		}
	}
	// Control: the same lists naming existing paths.
	ok := build(`{"denyRead":["~/.ssh","./**/*.nothing"],"allowRead":["~/.ssh/id_rsa"],"allowWrite":[".","./src"],"denyWrite":["./not-yet"]}`, "~/.bashrc")
	for _, w := range ok.Warnings {
		if strings.Contains(w, "do not exist") {
			t.Errorf("control: a warning about existing paths: %s", w)
		}
	}
}
