package plan

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// pathsHost is the filesystem of the golden cases for issue 10's path
// items: symlinks a sandbox could have planted in the project (owned by the
// user, uid 1000), symlinks it could not have (root's, in root's
// directories, or in sticky /tmp), and a directory with brackets in its name.
func pathsHost() *fsview.Mem {
	return fsview.NewMem(map[string]string{
		"/usr/bin/bash":                      "file",
		"/usr/local/bin/srt-init":            "file",
		"/dev/null":                          "file",
		"/proc/sys/kernel/core_pattern":      "file",
		"/home/u/proj/config/secrets.env":    "file",
		"/home/u/proj/config/dir/k":          "file",
		"/home/u/proj/keys/a/x.pem":          "file",
		"/home/u/proj/build":                 "-> /home/u/elsewhere", // item 7
		"/home/u/elsewhere/f":                "file",
		"/home/u/secret/id_rsa":              "file",
		"/home/u/proj/data":                  "-> ../secret",    // item 14
		"/home/u/proj/docs":                  "-> /home/u/.ssh", // item 19: made before the run
		"/home/u/.ssh/id_ed25519":            "file",
		"/home/u/proj/cfg.json":              "-> aws/credentials", // item 19: a file
		"/home/u/proj/aws/credentials":       "file",
		"/home/u/proj/pub/d1":                "-> ../../secret", // item 19: a pattern's match
		"/home/u/proj/pub/real/readme":       "file",
		"/home/u/proj/out":                   "-> ../outside", // item 18
		"/home/u/outside/deep/.env":          "file",
		"/home/u/outside/readme":             "file",
		"/home/u/proj/.env":                  "file",
		"/home/u/proj/rootlink":              "-> /", // item 21
		"/home/u/proj/up":                    "-> ..",
		"/home/u/[WIP] project/.env":         "file", // item 16
		"/home/u/[WIP] project/sub/.env":     "file",
		"/home/u/[WIP] project/sub/x":        "file",
		"/home/u/W/.env":                     "file",
		"/home/u/[WIP] project/[WIP]/.env":   "file",
		"/srv/link":                          "-> /data/shared", // root's, in root's directory
		"/data/shared/readme":                "file",
		"/tmp/other":                         "-> /data/shared", // root's, in sticky /tmp
		"/tmp/mine":                          "-> /data/shared", // the user's, in sticky /tmp
		"/home/u/proj/group-dir/link":        "-> /data/shared", // root's, in a directory a group may write (ACLs unread: counted as the user's)
		"/home/u/proj/sticky-own/link":       "-> /data/shared", // root's, in the user's own sticky directory
		"/home/u/proj/sticky-other/link":     "-> /data/shared", // root's, in root's sticky directory
		"/home/u/proj/sticky-other/own-link": "-> /data/shared", // the user's, there
	}).Own("/home/u", 1000, 1000).Own("/tmp/mine", 1000, 1000).Chmod("/tmp", fs.ModeSticky|0o777).
		Own("/home/u/proj/group-dir", 0, 50).Chmod("/home/u/proj/group-dir", 0o775).
		Chmod("/home/u/proj/sticky-own", fs.ModeSticky|0o777).Own("/home/u/proj/sticky-own/link", 0, 0).
		Own("/home/u/proj/sticky-other", 0, 0).Chmod("/home/u/proj/sticky-other", fs.ModeSticky|0o777).
		Own("/home/u/proj/sticky-other/own-link", 1000, 1000)
}

func paths(in *Input) { in.FS = pathsHost() }

// allowSymlinks are the settings of the trust cases: every allow list
// through planted links (data, docs, cfg.json, build, pub/d1, /tmp/mine) and
// through links the user could not have made (/srv/link, /tmp/other).
const allowSymlinks = `{"denyRead":["~/secret","~/.ssh","aws","/data"],` +
	`"allowRead":["data","docs","cfg.json","pub/*","/srv/link","/tmp/other","/tmp/mine","group-dir/link","sticky-own/link","sticky-other/link","sticky-other/own-link"],` +
	`"allowWrite":["build","data/","pub"],"denyWrite":[]}`

func fsSettings(fs string) string {
	return `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + fs + `}`
}

func withCredentials(settingsJSON, creds string) string {
	return strings.TrimSuffix(settingsJSON, "}") + `,"credentials":` + creds + `}`
}

// TestDotDotAfterWildcardInADeny: a deny whose ".." follows a wildcard
// cannot be expanded, and a deny that cannot be applied stops srt (issue
// 10, item 20) with an error naming the entry.
func TestDotDotAfterWildcardInADeny(t *testing.T) {
	for _, fsJSON := range []string{
		`{"denyRead":["proj/*/../secret"],"allowWrite":[],"denyWrite":[]}`,
		`{"denyRead":[],"allowWrite":[],"denyWrite":["[ab]/.."]}`,
	} {
		cfg, err := settings.Parse([]byte(fsSettings(fsJSON)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(Input{Config: cfg, FS: pathsHost(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000})
		if !errors.Is(err, settings.ErrInvalid) || !strings.Contains(err.Error(), `a ".." after a wildcard cannot be expanded`) {
			t.Errorf("%s: got %v, want a settings error about the \"..\"", fsJSON, err)
		}
	}
}

// TestGrantsByPathWithoutBindFD: with firstFD 0 (bubblewrap older than
// 0.8.0) the grants are bound by path, and with a first descriptor each
// grant takes the next one, in the order of Grants.
func TestGrantsByPathWithoutBindFD(t *testing.T) {
	cfg, err := settings.Parse([]byte(fsSettings(`{"denyRead":["~"],"allowRead":["~/proj/config"],"allowWrite":["keys"],"denyWrite":[]}`)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(Input{Config: cfg, FS: pathsHost(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range p.Grants() {
		paths = append(paths, g.Path)
	}
	if strings.Join(paths, " ") != "/home/u/proj/config /home/u/proj/keys" {
		t.Fatalf("grants %q", paths)
	}
	byPath, _ := p.BwrapArgs("/init", 0)
	byFD, _ := p.BwrapArgs("/init", 9)
	for _, c := range []struct {
		args       []string
		want, lack string
	}{
		{byPath, "--ro-bind /home/u/proj/config /home/u/proj/config --bind /home/u/proj/keys /home/u/proj/keys", "-fd"},
		{byFD, "--ro-bind-fd 9 /home/u/proj/config --bind-fd 10 /home/u/proj/keys", "--bind /home"},
	} {
		line := strings.Join(c.args, " ")
		if !strings.Contains(line, c.want) || strings.Contains(line, c.lack) {
			t.Errorf("bwrap options %q: want %q and no %q", line, c.want, c.lack)
		}
	}
}
