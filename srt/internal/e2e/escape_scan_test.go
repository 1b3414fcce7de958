//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The mandatory-protection scan (found by the independent review of issue
// 10): the walk that finds nested repositories, .vscode, .claude and deeper
// start-up files must not give up and leave what it did not reach writable,
// must cover every directory the command may write (not only the working
// directory), and must not let a planted symlink make every later run
// read-only.

// scanDirsBudget is one more than the directories the scan lists
// (maxScanDirs in srt/internal/plan/scan.go).
const scanDirsBudget = "20001"

// TestEscapeScanExhausted: a command fills the working directory so that a
// later run's scan gives up; the next run must still protect a nested
// repository's hooks. Filled with files (the review's attack: 50001, past
// the old entry budget), the scan reads the directory once and goes on;
// filled with more directories than the scan lists, the filled directory is
// write-protected whole (with a warning naming it) and the scan goes on
// with the others, so the repository beside it stays protected and the
// rest of the working directory writable.
func TestEscapeScanExhausted(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		sub := w.mkdir("home/proj/sub")
		w.gitOnHostOK(sub, "init", "-q")
		hook := sub + "/.git/hooks/pre-commit"
		// Control: the nested repository's hooks are protected.
		want(t, w.probe(fsSettings(writeCwd), "write-file", hook, "#!/bin/sh\n"), "create", refused("EROFS"))

		want(t, w.probe(fsSettings(writeCwd), "fill", w.dir+"/aaa", "50001"), "fill", "ok")
		p := w.probe(fsSettings(writeCwd), "write-file", hook, "#!/bin/sh\n")
		if data, _ := os.ReadFile(hook); len(data) > 0 {
			t.Fatalf("ESCAPE: after the working directory was filled with files, a nested repository's hook was written\n%s", p.result)
		}
		want(t, p, "create", refused("EROFS"))
		if strings.Contains(withoutAnnouncement(p.stderr), "warning") {
			t.Errorf("a directory of 50001 files stopped the scan:\n%s", p.result)
		}
		// The filled directory stays writable.
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.dir+"/aaa/more", "x"), "create", "ok")

		want(t, w.probe(fsSettings(writeCwd), "fill-dirs", w.dir+"/aab", scanDirsBudget, "f"), "fill", "ok")
		p = w.probe(fsSettings(writeCwd), "write-file", hook, "#!/bin/sh\n")
		if data, _ := os.ReadFile(hook); len(data) > 0 {
			t.Fatalf("ESCAPE: after the working directory was filled with directories, a nested repository's hook was written\n%s", p.result)
		}
		want(t, p, "create", refused("EROFS"))
		if !strings.Contains(p.stderr, "could not look into all of these: "+w.dir+"/aab;") {
			t.Errorf("no warning names the directory the scan did not look into:\n%s", p.result)
		}
		// What the scan could not look into is read-only; the rest of
		// the working directory is not.
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.dir+"/aab/e0/.bashrc", "x"), "create", refused("EROFS"))
		want(t, w.probe(fsSettings(writeCwd), "write-file", w.dir+"/after", "x"), "create", "ok")
	})
}

// TestEscapeSiblingRepository: with a grant above the working directory
// (allowWrite ["~"]), the hooks and config of another repository in that
// space (~/other) are protected too, also one whose HEAD was moved aside
// (item 17 beside the working directory) and one whose .git is a file; the
// host's next git commit there runs nothing planted.
func TestEscapeSiblingRepository(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		other := w.mkdir("home/other")
		w.gitOnHostOK(other, "init", "-q")
		w.gitOnHostOK(w.dir, "init", "-q")
		headless := w.mkdir("home/headless")
		w.gitOnHostOK(headless, "init", "-q")
		separate := w.mkdir("home/separate")
		w.gitOnHostOK(separate, "init", "-q", "--separate-git-dir", w.home+"/separate-git")
		s := fsSettings(`{"denyRead":[],"allowWrite":["~"],"denyWrite":[]}`)
		mark := w.markFile("sibling-hook-ran")
		hook := "#!/bin/sh\ntouch " + mark + "\n"
		// Control: the working directory's own repository is protected.
		want(t, w.probe(s, "write-file", w.dir+"/.git/hooks/pre-commit", hook), "create", refused("EROFS"))
		// Control: the same hook written on the host runs on the next
		// commit (a repository the sandbox does not touch).
		ctl := w.mkdir("home/control")
		w.gitOnHostOK(ctl, "init", "-q")
		want(t, w.hostProbe("write-file", ctl+"/.git/hooks/pre-commit", hook), "create", "ok")
		w.write("home/control/a", "a")
		w.gitOnHostOK(ctl, "add", "a")
		w.gitOnHost(ctl, "commit", "-qm", "a")
		if !exists(mark) {
			t.Fatal("control: a hook written on the host did not run: the test cannot see an escape")
		}
		os.Remove(mark)

		p := w.probe(s, "write-file", other+"/.git/hooks/pre-commit", hook)
		w.write("home/other/a", "a")
		w.gitOnHostOK(other, "add", "a")
		w.gitOnHost(other, "commit", "-qm", "a")
		if exists(mark) {
			t.Errorf("ESCAPE: a hook written in a repository beside the working directory ran on the host\n%s", p.result)
		}
		want(t, p, "create", refused("EROFS"))

		// HEAD moved aside in one run, the hook written in the next.
		want(t, w.probe(s, "rename", headless+"/.git/HEAD", headless+"/.git/HEAD.bak"), "rename", "ok")
		want(t, w.probe(s, "write-file", headless+"/.git/hooks/pre-commit", hook), "create", refused("EROFS"))

		// A .git file naming a git directory elsewhere in the grant.
		want(t, w.probe(s, "write-file", w.home+"/separate-git/hooks/pre-commit", hook), "create", refused("EROFS"))
		want(t, w.probe(s, "write-file", separate+"/.git", "gitdir: /tmp\n"), "create", refused("EROFS"))
	})
}

// TestEscapeAvailabilityProtectedLink: a command makes protected names
// below the working directory symlinks to /, to a directory above the
// working directory and to the working directory itself (and a .git that
// leads there); the scan would protect what they point to, and every later
// run could write nothing. Those protections are ignored, with a warning
// naming each link; a protected link to anywhere else still protects its
// target. The same for a denyWrite entry whose symlink is replaced by one
// to /.
func TestEscapeAvailabilityProtectedLink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		shared := w.mkdir("shared/vs")
		s := fsSettings(`{"denyRead":[],"allowWrite":[".","` + filepath.Dir(shared) + `"],"denyWrite":[]}`)
		// Control: the working directory is writable.
		want(t, w.probe(s, "write-file", w.dir+"/before", "x"), "create", "ok")
		w.mkdir("home/proj/sub")
		links := map[string]string{
			"sub/.vscode":   "/",
			"sub/.idea":     w.home,
			"sub/.bashrc":   "/",
			"sub/.git":      "..",
			"sub/.mcp.json": "../..",
		}
		for link, target := range links {
			want(t, w.probe(s, "plant-link", target, w.dir+"/"+link), "plant-link", "ok")
		}
		// A protected name that points elsewhere writable.
		want(t, w.probe(s, "plant-link", shared, w.dir+"/sub/.claude"), "plant-link", "ok")

		p := w.probe(s, "write-file", w.dir+"/after", "x")
		if p.steps["create"] != "ok" {
			t.Errorf("AVAILABILITY: symlinks to / and to the working directory's ancestors under protected names make every later run read-only\n%s", p.result)
		}
		for link := range links {
			if !strings.Contains(p.stderr, w.dir+"/"+link) {
				t.Errorf("no warning names %s:\n%s", link, p.result)
			}
		}
		// Control: a protected link to a directory that holds no
		// working directory still protects it.
		want(t, w.probe(s, "write-file", shared+"/tasks.json", "{}"), "create", refused("EROFS"))
		want(t, w.probe(s, "write-file", filepath.Dir(shared)+"/beside", "x"), "create", "ok")

		// denyWrite: a symlinked protected name replaced by a link to /.
		w.write("home/proj/scripts/deploy.sh", "#!/bin/sh\n")
		w.symlink("scripts/deploy.sh", "home/proj/deploy.sh")
		d := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["deploy.sh"]}`)
		want(t, w.probe(d, "write-file", w.dir+"/scripts/deploy.sh", "x"), "create", refused("EROFS"))
		want(t, w.probe(d, "plant-link", "/", w.dir+"/new-link"), "plant-link", "ok")
		if testBackend == "landlock" {
			// The Landlock backend keeps the protected link itself: the
			// availability attack cannot start.
			want(t, w.probe(d, "rename", w.dir+"/new-link", w.dir+"/deploy.sh"), "rename", "EROFS")
			return
		}
		want(t, w.probe(d, "rename", w.dir+"/new-link", w.dir+"/deploy.sh"), "rename", "ok")
		p = w.probe(d, "write-file", w.dir+"/after-deny", "x")
		if p.steps["create"] != "ok" {
			t.Errorf("AVAILABILITY: a denyWrite symlink replaced by a link to / makes every later run read-only\n%s", p.result)
		}
		// The path rule of item 21 (a deny through a link to "/" or above
		// itself is ignored) names it.
		if !strings.Contains(p.stderr, `filesystem.denyWrite.0 "deploy.sh" is ignored where it passes through the symlink `+w.dir+"/deploy.sh -> /") {
			t.Errorf("no warning names the denyWrite link:\n%s", p.result)
		}
	})
}
