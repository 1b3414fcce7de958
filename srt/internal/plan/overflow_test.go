package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// overflowHost is the filesystem of the overflow cases: a project with
// two .env files and a lock file, and what a command that may write it
// left there (floods, each "dir:files", "dir/*/name:count" or
// "link -> target"), and a directory of root's outside any write grant.
func overflowHost(floods ...string) *fsview.Mem {
	spec := map[string]string{
		"/usr/bin/bash":                 "file",
		"/usr/local/bin/srt-init":       "file",
		"/dev/null":                     "file",
		"/proc/sys/kernel/core_pattern": "file",
		"/home/u/proj/.env":             "file",
		"/home/u/proj/src/.env":         "file",
		"/home/u/proj/src/a.lock":       "file",
		"/home/u/proj/src/main.go":      "file",
		"/srv/data/.env":                "file",
	}
	for i := range 40 {
		spec[fmt.Sprintf("/srv/data/f%02d", i)] = "file"
	}
	for _, f := range floods {
		if link, to, ok := strings.Cut(f, " -> "); ok {
			spec[filepath.Join("/home/u/proj", link)] = "-> " + to
			continue
		}
		dir, count, _ := strings.Cut(f, ":")
		var n int
		fmt.Sscan(count, &n)
		for i := range n {
			if d, name, ok := strings.Cut(dir, "/*/"); ok {
				spec[filepath.Join("/home/u/proj", d, fmt.Sprintf("d%02d", i), name)] = "file"
			} else {
				spec[filepath.Join("/home/u/proj", dir, fmt.Sprintf("f%02d", i))] = "file"
			}
		}
	}
	return fsview.NewMem(spec).Own("/home/u", 1000, 1000)
}

func overflowInput(t *testing.T, fsJSON string, fs *fsview.Mem, l Limits) Input {
	t.Helper()
	cfg, err := settings.Parse([]byte(fsSettings(fsJSON)))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Config: cfg, FS: fs, Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, TmpDir: PrivateTmp,
		Command: []string{"/usr/bin/bash", "-c", "true"}, Limits: l}
}

// The legitimate plan of these settings needs 16 mounts (the working
// directory, its 12 always-protected placeholders, .env, src and
// src/.env), and its walks 7 entries.
const envDeny = `{"denyRead":["./**/.env"],"allowWrite":["."],"denyWrite":[]}`

func TestGoldenOverflow(t *testing.T) {
	cases := []struct {
		name, fs string
		floods   []string
		limits   Limits
	}{
		// A command filled junk: the walk passes 30 entries there, so
		// junk is hidden whole — the allowRead beneath it re-opens
		// nothing — and the rest is expanded as before.
		{"overflow-walk-hides", `{"denyRead":["./**/.env"],"allowRead":["junk/sub"],"allowWrite":["."],"denyWrite":[]}`,
			[]string{"junk:40", "junk/sub/*/.env:1"}, Limits{Entries: 30}},
		// Two filled directories: two walks, each hiding one.
		{"overflow-walk-two", envDeny, []string{"junk:40", "junk2:40"}, Limits{Entries: 30}},
		// A denyWrite pattern write-protects the directory whole.
		{"overflow-walk-denywrite", `{"denyRead":[],"allowWrite":["."],"denyWrite":["./**/*.lock"]}`,
			[]string{"junk:40"}, Limits{Entries: 30}},
		// A symlink in sub leads the walk into a tree no sandbox may
		// write: what it walks there counts in sub, which is hidden.
		{"overflow-walk-link-out", envDeny, []string{"sub/out -> /srv/data", "sub/x:2"}, Limits{Entries: 30}},
		// The flood is in the working directory itself: it is what is
		// hidden.
		{"overflow-walk-cwd", envDeny, []string{".:40"}, Limits{Entries: 30}},
		// Twelve directories each holding a .env need 24 mounts (the file
		// and a pin of its directory): many is hidden whole instead.
		{"overflow-mounts", envDeny, []string{"many/*/.env:12"}, Limits{Mounts: 20}},
		// Two of them: each is hidden, not their common parent.
		{"overflow-mounts-two", envDeny, []string{"many/*/.env:12", "more/*/.env:12"}, Limits{Mounts: 20}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Build(overflowInput(t, c.fs, overflowHost(c.floods...), c.limits))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, p.String())
		})
	}
}

// TestOverflowOutsideWriteGrants: what overflows where no sandbox may
// write was not a sandbox's doing, and srt stops as before, saying so.
func TestOverflowOutsideWriteGrants(t *testing.T) {
	cases := []struct {
		name, fs string
		limits   Limits
		err      error
		says     string
	}{
		{"walk", `{"denyRead":["/srv/**/.env"],"allowWrite":["."],"denyWrite":[]}`, Limits{Entries: 30},
			ErrGlobTooBroad, `filesystem.denyRead.0 "/srv/**/.env": deny pattern walks too many entries: glob "/srv/**/.env": walking "/srv/data": too many entries (limit 30); none of them lie beneath allowWrite, so no sandbox made them: narrow the pattern`},
		{"mounts", `{"denyRead":["/srv/data/f*"],"allowWrite":["."],"denyWrite":[]}`, Limits{Mounts: 30},
			ErrTooManyMounts, "the filesystem rules need 53 mounts, more than srt's limit of 30, and no directory beneath allowWrite holds enough of them to be hidden whole, so no sandbox filled one with them; narrow the patterns in denyRead, allowRead or denyWrite, or remove a symlink that leads a deny pattern into a large tree: too many mounts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(overflowInput(t, c.fs, overflowHost("junk:40"), c.limits))
			if !errors.Is(err, c.err) || err.Error() != c.says {
				t.Fatalf("error = %v\nwant %q", err, c.says)
			}
		})
	}
}

// TestSmallerLimitsHideMore: whatever the limits, a plan that builds shows
// no path the plan under srt's own limits hides, and lets no path be
// written that it keeps read-only: a smaller limit only hides more.
func TestSmallerLimitsHideMore(t *testing.T) {
	settingsCases := []string{
		envDeny,
		`{"denyRead":["./**/.env"],"allowRead":["junk/sub","many"],"allowWrite":["."],"denyWrite":["./**/*.lock"]}`,
		`{"denyRead":["~","./**/.env"],"allowRead":["."],"allowWrite":["junk","many"],"denyWrite":[]}`,
	}
	floods := []string{"junk:40", "junk/sub/*/.env:3", "many/*/.env:12", "more/*/.env:6"}
	built, hid := 0, 0
	for i, s := range settingsCases {
		fs := overflowHost(floods...)
		want, err := Build(overflowInput(t, s, fs, Limits{}))
		if err != nil {
			t.Fatalf("settings %d under srt's limits: %v", i, err)
		}
		paths := fsPaths(fs, "/home/u")
		for entries := 1; entries <= 150; entries += 9 {
			for mounts := 1; mounts <= 100; mounts += 4 {
				got, err := Build(overflowInput(t, s, fs, Limits{Entries: entries, Mounts: mounts}))
				if err != nil {
					continue // stopping shows nothing
				}
				built++
				if strings.Contains(strings.Join(got.Warnings, "\n"), " whole rather than ") {
					hid++
				}
				for _, p := range paths {
					if seen(got, p) > seen(want, p) {
						t.Errorf("settings %d, limits %d entries %d mounts: %s is %v, %v under srt's limits", i, entries, mounts, p, seen(got, p), seen(want, p))
					}
				}
			}
		}
	}
	t.Logf("%d plans built, %d of them denying a directory whole", built, hid)
	if hid == 0 || hid == built {
		t.Error("the limits tried do not exercise both kinds of plan")
	}
}

// seen is how much of the host the sandbox of p sees at path: 0 hidden,
// 1 read-only, 2 writable.
func seen(p *Plan, path string) int {
	view, at := p.Root, ""
	for _, m := range p.Mounts {
		if fsview.IsWithin(path, m.Path) && len(m.Path) > len(at) {
			view, at = m.View, m.Path
		}
	}
	switch view {
	case HostRW:
		return 2
	case HostRO:
		return 1
	}
	return 0
}

// fsPaths lists every path at or beneath dir.
func fsPaths(f fsview.FS, dir string) []string {
	out := []string{dir}
	ents, err := f.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		out = append(out, fsPaths(f, filepath.Join(dir, e.Name()))...)
	}
	return out
}

func TestPickHidden(t *testing.T) {
	all := func(string) bool { return true }
	cases := []struct {
		name     string
		charged  map[string]int
		fillable func(string) bool
		need     int
		dir      string
		held     int
		ok       bool
	}{
		{"the deepest that holds need", map[string]int{"/p": 3, "/p/junk": 40, "/p/src": 1}, all, 22, "/p/junk", 40, true},
		{"a filled directory of directories", map[string]int{"/p": 2, "/p/many": 5, "/p/many/a": 1, "/p/many/b": 1, "/p/many/c": 1, "/p/many/d": 1, "/p/many/e": 1}, all, 6, "/p/many", 10, true},
		{"of two that do, the one holding most", map[string]int{"/p/a": 7, "/p/b": 9, "/p/c": 1}, all, 5, "/p/b", 9, true},
		{"ties: first in path order", map[string]int{"/p/a": 7, "/p/b": 7}, all, 5, "/p/a", 7, true},
		{"none holds need: the one holding most", map[string]int{"/p/a": 7, "/p/b": 9}, func(d string) bool { return d != "/p" && d != "/" }, 12, "/p/b", 9, true},
		{"ties: the deeper", map[string]int{"/p/a/b": 7}, all, 12, "/p/a/b", 7, true},
		{"only what fillable accepts", map[string]int{"/p/junk": 40, "/p/src": 1}, func(d string) bool { return d == "/p/src" }, 20, "/p/src", 1, true},
		{"nothing fillable", map[string]int{"/srv/data": 40}, func(string) bool { return false }, 20, "", 0, false},
		{"nothing held", map[string]int{"/p/a": 0}, all, 1, "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, held, ok := pickHidden(c.charged, c.fillable, c.need)
			if dir != c.dir || held != c.held || ok != c.ok {
				t.Errorf("pickHidden = %q, %d, %v; want %q, %d, %v", dir, held, ok, c.dir, c.held, c.ok)
			}
		})
	}
}
