package plan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

// network.allowUnixSockets as the init stage gets it: an entry the
// command cannot replace goes by its path; a socket file it could replace
// (the sandbox may write the directory holding it, or one above that is
// no mount point) is pinned to the file there now, anything else there to
// nothing, with a warning; a directory it could write or replace is an
// error naming the entry, the directory and the rule.
func TestUnixSocketsPinned(t *testing.T) {
	fsys := func() *fsview.Mem {
		return fsview.NewMem(map[string]string{
			"/usr/bin/bash":                   "file",
			"/usr/local/bin/srt-init":         "file",
			"/run/agent.sock":                 "socket",
			"/run/sockets/a.sock":             "socket",
			"/home/u/.ssh/agent":              "-> /run/agent.sock",
			"/home/u/proj/agent/agent.sock":   "socket",
			"/home/u/proj/notes.txt":          "file",
			"/home/u/proj/sockets/b.sock":     "socket",
			"/home/u/proj/ro/c.sock":          "socket",
			"/home/u/proj/link-to-run":        "-> /run",
			"/home/u/other/agent-dir/d.sock":  "socket",
			"/home/u/proj/.git/HEAD":          "file",
			"/tmp/srt-1000":                   "dir",
			"/home/u/proj/sockets/sub/e.sock": "socket",
		}).Own("/home/u", 1000, 1000)
	}
	var boundAs func(FileID) (string, bool, error)
	build := func(fs string, allowed ...string) (*Plan, error) {
		t.Helper()
		list, _ := json.Marshal(allowed)
		cfg, err := settings.Parse([]byte(`{"filesystem":` + fs + `,"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":` + string(list) + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		return Build(Input{Config: cfg, FS: fsys(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000,
			Command: []string{"/usr/bin/bash"}, Helpers: []string{"/usr/local/bin/srt-init"}, StateDir: "/tmp/srt-1000", BoundAs: boundAs})
	}
	id := func(p string) *FileID {
		fi, err := fsys().Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return idOf(fi)
	}
	const cwd = `{"denyRead":[],"allowWrite":["."],"denyWrite":["ro"]}`
	const home = `{"denyRead":[],"allowWrite":["~"],"denyWrite":[]}`
	const homeRO = `{"denyRead":[],"allowWrite":["~"],"denyWrite":["/home/u/other/agent-dir"]}`
	path := func(p string) initstage.UnixSocket { return initstage.UnixSocket{Path: p} }
	pinned := func(p string) initstage.UnixSocket {
		fi, _ := fsys().Lstat(p)
		return initstage.UnixSocket{Path: p, Pinned: true, ID: id(p), Changed: changedOf(fi)}
	}
	for _, c := range []struct {
		name    string
		fs      string
		allowed []string
		want    []initstage.UnixSocket
		warn    string
	}{
		{"out of the sandbox's writes: by path, a daemon may come and go", cwd,
			[]string{"/run/agent.sock", "/run/late.sock", "/run/sockets", "~/.ssh/agent", "/home/u/proj/link-to-run/sockets"},
			[]initstage.UnixSocket{path("/run/agent.sock"), path("/run/late.sock"), path("/run/sockets"), path("/run/agent.sock"), path("/run/sockets")}, ""},
		{"a socket file in the writable directory: pinned", cwd, []string{"/home/u/proj/agent/agent.sock", "/home/u/proj/sockets/b.sock"},
			[]initstage.UnixSocket{pinned("/home/u/proj/agent/agent.sock"), pinned("/home/u/proj/sockets/b.sock")}, ""},
		{"nothing there yet, in the writable directory: pinned to nothing", cwd, []string{"/home/u/proj/agent/later.sock"},
			[]initstage.UnixSocket{{Path: "/home/u/proj/agent/later.sock", Pinned: true}},
			"network.allowUnixSockets.0: /home/u/proj/agent/later.sock is no socket now, and the sandbox may write /home/u/proj/agent (filesystem.allowWrite.0): a socket put there later cannot be told from one the command moves there, so no host socket is reached at /home/u/proj/agent/later.sock in this run (start its daemon before srt; a socket the command binds there itself still works)"},
		{"a file that is no socket, in the writable directory: pinned to nothing", cwd, []string{"/home/u/proj/notes.txt"},
			[]initstage.UnixSocket{{Path: "/home/u/proj/notes.txt", Pinned: true}}, "network.allowUnixSockets.0: /home/u/proj/notes.txt is no socket now"},
		{"a read-only directory that is a mount point, in a writable mount point", cwd, []string{"/home/u/proj/ro"},
			[]initstage.UnixSocket{path("/home/u/proj/ro")}, ""},
		{"a socket file in it", cwd, []string{"/home/u/proj/ro/c.sock"}, []initstage.UnixSocket{path("/home/u/proj/ro/c.sock")}, ""},
		// ~ writable: other is no mount point, the command can rename
		// agent-dir and put another d.sock in its place.
		{"a socket file in a directory beneath a writable one", home, []string{"/home/u/other/agent-dir/d.sock"},
			[]initstage.UnixSocket{pinned("/home/u/other/agent-dir/d.sock")}, ""},
		// denyWrite makes it read-only, and srt pins the directories
		// above it (mount points: they cannot be renamed).
		{"a read-only directory, and a socket file in it", homeRO, []string{"/home/u/other/agent-dir/d.sock", "/home/u/other/agent-dir"},
			[]initstage.UnixSocket{path("/home/u/other/agent-dir/d.sock"), path("/home/u/other/agent-dir")}, ""},
	} {
		p, err := build(c.fs, c.allowed...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(p.Init.UnixSockets, c.want) {
			t.Errorf("%s: got %v, want %v\n%s", c.name, p.Init.UnixSockets, c.want, p)
		}
		warnings := strings.Join(p.Warnings, "\n")
		if c.warn != "" && !strings.Contains(warnings, c.warn) || c.warn == "" && strings.Contains(warnings, "allowUnixSockets") {
			t.Errorf("%s: warnings\n%s\nwant %q", c.name, warnings, c.warn)
		}
	}

	for _, c := range []struct {
		name    string
		fs      string
		allowed string
		err     string
	}{
		{"a directory in the writable directory", cwd, "/home/u/proj/sockets",
			`network.allowUnixSockets.0 "/home/u/proj/sockets": /home/u/proj/sockets is a directory, and the sandbox may write /home/u/proj/sockets (filesystem.allowWrite.0): the command could move any host socket it may rename into the directory and reach it; list the socket files in it instead (srt pins each to the socket there when the command starts), or keep /home/u/proj/sockets read-only (filesystem.denyWrite)`},
		{"a directory beneath it", cwd, "/home/u/proj/sockets/sub", "sub is a directory, and the sandbox may write /home/u/proj/sockets/sub (filesystem.allowWrite.0)"},
		{"a directory beneath a writable one", home, "/home/u/other/agent-dir", "/home/u/other/agent-dir is a directory, and the sandbox may write /home/u/other/agent-dir (filesystem.allowWrite.0)"},
		{"the writable directory itself", cwd, "/home/u/proj", "/home/u/proj is a directory, and the sandbox may write /home/u/proj (filesystem.allowWrite.0)"},
		{"a directory elsewhere, with / writable", `{"denyRead":[],"allowWrite":["/"],"denyWrite":[]}`, "/run/sockets",
			"/run/sockets is a directory, and the sandbox may write /run/sockets (filesystem.allowWrite.0)"},
	} {
		_, err := build(c.fs, c.allowed)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want the error %q", c.name, err, c.err)
		}
	}

	// A socket file srt would pin must be the one its daemon bound there
	// (sock_diag's name), not one moved there, by an earlier sandbox.
	agent := "/home/u/proj/agent/agent.sock"
	for _, c := range []struct {
		name  string
		bound string
		found bool
		err   error
		warn  string
	}{
		{"bound there", agent, true, nil, ""},
		{"bound through a symlink", "/home/u/proj/./agent/agent.sock", true, nil, ""},
		{"no one bound to it: taken as it is", "", false, nil, ""},
		{"bound elsewhere", "/home/u/proj/priv/priv.sock", true, nil,
			`network.allowUnixSockets.0: the socket at /home/u/proj/agent/agent.sock was bound as "/home/u/proj/priv/priv.sock": it was moved there (an earlier sandbox may have: the sandbox may write /home/u/proj/agent, by filesystem.allowWrite.0), so no host socket is reached there in this run (restart its daemon, which makes its socket there again)`},
		{"bound by a relative path: cannot be told", "agent.sock", true, nil, `was bound as "agent.sock": it was moved there`},
		{"sock_diag fails", "", false, errors.New("no netlink"), "srt cannot tell whether the socket at " + agent + " is the one its daemon bound there (no netlink)"},
	} {
		boundAs = func(got FileID) (string, bool, error) {
			if got != *id(agent) {
				t.Errorf("%s: BoundAs(%v), want the socket's %v", c.name, got, *id(agent))
			}
			return c.bound, c.found, c.err
		}
		p, err := build(cwd, agent)
		if err != nil {
			t.Fatal(err)
		}
		want := initstage.UnixSocket{Path: agent, Pinned: true}
		if c.warn == "" {
			want = pinned(agent)
		}
		warnings := strings.Join(p.Warnings, "\n")
		if !reflect.DeepEqual(p.Init.UnixSockets, []initstage.UnixSocket{want}) || c.warn == "" && strings.Contains(warnings, "allowUnixSockets") || !strings.Contains(warnings, c.warn) {
			t.Errorf("%s: got %v\n%s\nwant %v, %q", c.name, p.Init.UnixSockets, warnings, want, c.warn)
		}
	}
}
