package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// scanPlan builds the plan of a filesystem section (and top-level fields)
// in /home/u/proj.
func scanPlan(t *testing.T, host map[string]string, fsJSON, top string) *Plan {
	t.Helper()
	doc := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],` + fsJSON + `}`
	if top != "" {
		doc += "," + top
	}
	cfg, err := settings.Parse([]byte(doc + "}"))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"/usr/bin/bash": "file", "/usr/local/bin/srt-init": "file", "/proc/cpuinfo": "file 0444",
		"/sys/kernel": "dir", "/etc/passwd": "file", "/home/u/proj": "dir"}
	for k, v := range host {
		base[k] = v
	}
	p, err := Build(Input{Config: cfg, FS: fsview.NewMem(base), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, TmpDir: PrivateTmp,
		Command: []string{"/usr/bin/bash", "-c", "true"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lowerBudgets sets the scan's budgets for one test.
func lowerBudgets(t *testing.T, dirs, listing, unscanned int) {
	old := [3]int{maxScanDirs, maxScanListing, maxUnscanned}
	maxScanDirs, maxScanListing, maxUnscanned = dirs, listing, unscanned
	t.Cleanup(func() { maxScanDirs, maxScanListing, maxUnscanned = old[0], old[1], old[2] })
}

// fillDirs adds n directories under dir, each holding a file.
func fillDirs(host map[string]string, dir string, n int) {
	for i := 0; i < n; i++ {
		host[fmt.Sprintf("%s/e%d/f", dir, i)] = "file"
	}
}

// The scan's budgets, at toy sizes: a directory filled with more
// subdirectories than the scan lists is protected whole, and the scan goes
// on with its smaller neighbours (the nested repository beside it stays
// protected); a directory with more entries than one listing reads is
// protected whole; a directory of many files costs one listing.
func TestGoldenScanBudget(t *testing.T) {
	lowerBudgets(t, 12, 30, 16)
	host := map[string]string{
		"/home/u/proj/sub/.git/HEAD":            "file",
		"/home/u/proj/sub/.git/hooks":           "dir",
		"/home/u/proj/sub/lib/.bashrc":          "file",
		"/home/u/proj/src/a/main.go":            "file",
		"/home/u/proj/src/b/.vscode":            "dir",
		"/home/u/proj/src/b/.bashrc":            "file",
		"/home/u/proj/node_modules/x/.git/HEAD": "file",
	}
	fillDirs(host, "/home/u/proj/filled", 20) // a family of 20: past the budget
	for i := 0; i < 40; i++ {                 // one listing of 40: past its cap
		host[fmt.Sprintf("/home/u/proj/wide/f%d", i)] = "file"
	}
	for i := 0; i < 25; i++ { // 25 files: one listing
		host[fmt.Sprintf("/home/u/proj/files/f%d", i)] = "file"
	}
	host["/home/u/proj/files/.bashrc"] = "file"
	golden(t, "scan-budget", scanPlan(t, host, `"allowWrite":["."],"denyWrite":[]`, "").String())
}

// More directories left out than maxUnscanned: their parents stand for
// them, up to the working directory. With a budget of 10 directories, proj,
// top and top/{a,b,c} are listed, then the families of a and b; c's is
// left out, and so are the four of a's and b's children, one level deeper.
func TestScanUnscannedBounded(t *testing.T) {
	host := map[string]string{}
	for _, d := range []string{"a", "b", "c"} {
		for _, e := range []string{"x", "y"} {
			fillDirs(host, "/home/u/proj/top/"+d+"/"+e, 4)
		}
	}
	for _, c := range []struct {
		unscanned int
		want      string
	}{
		{5, "/home/u/proj/top/a/x, /home/u/proj/top/a/y, /home/u/proj/top/b/x, /home/u/proj/top/b/y, /home/u/proj/top/c"},
		{3, "/home/u/proj/top/a, /home/u/proj/top/b, /home/u/proj/top/c"},
		{2, "/home/u/proj/top"},
	} {
		lowerBudgets(t, 10, 1000, c.unscanned)
		p := scanPlan(t, host, `"allowWrite":["."],"denyWrite":[]`, `"mandatoryDenySearchDepth":5`)
		found := false
		for _, w := range p.Warnings {
			found = found || strings.Contains(w, "could not look into all of these: "+c.want+";")
		}
		if !found {
			t.Errorf("at most %d: want the warning to name %s:\n%s", c.unscanned, c.want, p)
		}
		for _, path := range []string{"/home/u/proj/top/a/x/e0", "/home/u/proj/top/b/y/e3", "/home/u/proj/top/c/x/e1"} {
			if _, ok := p.Writable(path); ok {
				t.Errorf("at most %d: %s is writable, though the scan did not look into it:\n%s", c.unscanned, path, p)
			}
		}
		if _, ok := p.Writable("/home/u/proj/other"); !ok {
			t.Errorf("at most %d: the rest of the working directory is read-only:\n%s", c.unscanned, p)
		}
	}
}

// A scan that starts from a grant above the working directory (allowWrite
// ["~"]) protects the repositories beside the working directory, one with
// HEAD moved aside and one whose .git is a file, and nothing in ~ itself
// twice; node_modules is skipped.
func TestGoldenScanSiblings(t *testing.T) {
	host := map[string]string{
		"/home/u/.bashrc":                  "file",
		"/home/u/other/.git/HEAD":          "file",
		"/home/u/other/.git/hooks":         "dir",
		"/home/u/headless/.git/hooks":      "dir",
		"/home/u/separate/.git":            "text gitdir: /home/u/separate-git\n",
		"/home/u/separate-git/HEAD":        "file",
		"/home/u/src/deep/repo/.git/HEAD":  "file",
		"/home/u/node_modules/m/.git/HEAD": "file",
		"/home/u/.vscode/extensions":       "dir",
		"/home/u/proj/.git/HEAD":           "file",
		"/tmp/out/.git/HEAD":               "file",
	}
	golden(t, "scan-siblings", scanPlan(t, host, `"allowWrite":["~","/tmp/out"],"denyWrite":[]`, "").String())
}

// Protected names that are symlinks to "/", to a directory above the
// working directory, to the working directory (a .git among them) are
// ignored with a warning; one to /etc or to another writable directory
// still protects its target; the same for a denyWrite entry.
func TestGoldenScanLinks(t *testing.T) {
	host := map[string]string{
		"/home/u/proj/sub/.vscode":   "-> /",
		"/home/u/proj/sub/.idea":     "-> /home/u",
		"/home/u/proj/sub/.bashrc":   "-> /",
		"/home/u/proj/sub/.mcp.json": "-> ../..",
		"/home/u/proj/sub/.git":      "-> ..",
		"/home/u/proj/gd/.git":       "text gitdir: /home\n",
		"/home/u/proj/etc/.vscode":   "-> /etc",
		"/home/u/proj/sh/.claude":    "-> /srv/shared/vs",
		"/srv/shared/vs":             "dir",
		"/home/u/proj/deploy.sh":     "-> /",
		"/home/u/proj/up.sh":         "-> ../up.sh",
		"/home/u/up.sh":              "file",
	}
	golden(t, "scan-links", scanPlan(t, host, `"allowWrite":[".","/srv/shared"],"denyWrite":["deploy.sh","up.sh"]`, "").String())
}
