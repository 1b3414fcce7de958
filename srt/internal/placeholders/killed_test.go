//go:build linux

package placeholders

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// churnEnv makes the test binary a run that takes and lets go of
// placeholders over and over until it is killed (TestHelperChurn): the
// wants, path:kind, kind d (directory), f (empty file) or c (a file with
// content).
const churnEnv = "SRT_PLACEHOLDERS_CHURN"

func TestHelperChurn(t *testing.T) {
	arg := os.Getenv(churnEnv)
	if arg == "" {
		t.Skip("a helper process of TestKilledWhileMaking")
	}
	wants := parseChurn(arg)
	r, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	for { // until killed
		c, err := r.Acquire(wants)
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
}

func parseChurn(arg string) []Want {
	var wants []Want
	for _, s := range strings.Split(arg, ",") {
		p, kind, _ := strings.Cut(s, ":")
		w := Want{Path: p, Dir: kind == "d"}
		if kind == "c" {
			w.Content = "."
		}
		wants = append(wants, w)
	}
	return wants
}

// The finding of issue 14 (item 5): a run killed with SIGKILL while it
// was making its placeholders left empty files and directories in the
// user's project (.bashrc, .gitconfig, .idea) that no journal named with
// their identity, and the next sweep dropped the journal but not them.
// Now each is made under a name of its own that the journal names before
// it exists, and the journal holds its identity before it takes the
// wanted name: a sweep finds it under either. A run is killed at random
// points of making them, over and over; after the next sweep nothing of
// srt's is left. The control: the user's own files at wanted paths (empty
// ones too, which look like placeholders) and beside them survive every
// sweep.
func TestKilledWhileMaking(t *testing.T) {
	home := t.TempDir()
	var specs []string
	for i := 0; i < 8; i++ {
		d := filepath.Join(home, "d"+strconv.Itoa(i))
		specs = append(specs, d+":d", filepath.Join(d, "f")+":f", filepath.Join(home, "f"+strconv.Itoa(i))+":f", filepath.Join(home, "c"+strconv.Itoa(i))+":c")
	}
	// The user's: an empty file and an empty directory at wanted paths,
	// and a file beside them.
	users := []string{filepath.Join(home, "user-empty"), filepath.Join(home, "user-dir"), filepath.Join(home, "beside")}
	os.WriteFile(users[0], nil, 0o644)
	os.Mkdir(users[1], 0o755)
	os.WriteFile(users[2], []byte("mine"), 0o644)
	specs = append(specs, users[0]+":f", users[1]+":d")
	tmp := t.TempDir()
	for try := 0; try < 25; try++ {
		cmd := spawn(t, "TestHelperChurn", "TMPDIR="+tmp, churnEnv+"="+strings.Join(specs, ","))
		time.Sleep(time.Duration(try%5) * 300 * time.Microsecond)
		kill(cmd)
	}
	openIn(t, tmp) // the next run's sweep
	left, _ := os.ReadDir(home)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) != len(users) {
		t.Errorf("after the sweep, %s holds %v; want only the user's %v", home, names, users)
	}
	for _, p := range users {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the user's %s went: %v", p, err)
		}
	}
	if data, _ := os.ReadFile(users[2]); string(data) != "mine" {
		t.Errorf("the user's file beside the placeholders holds %q", data)
	}
	if js := readJournals(mustState(t)); len(js) != 0 {
		t.Errorf("journals of killed runs outlived the sweep: %+v", js)
	}
}

func mustState(t *testing.T) *stateDir {
	t.Helper()
	d, err := openState(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}
