//go:build linux

package e2e

import (
	"os"
	"strings"
	"testing"
)

const writeCwd = `{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`

func TestDefaultsAllowNoWrites(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.sh("", "touch x"), 1, "touch: cannot touch 'x': "+refusedText("EROFS"))
		expect(t, w.sh("", "cat /etc/hostname >/dev/null && echo readable"), 0, "readable")
		// The private TMPDIR is writable and gone afterwards.
		r := w.sh("", `echo x > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"`)
		expect(t, r, 0, "x\n")
		tmp := strings.TrimSpace(strings.Split(r.stdout, "\n")[1])
		if tmp != "/dev/shm" && !skipPart(t, "tmpdir") {
			t.Fatalf("TMPDIR is %q, want the private /dev/shm", tmp)
		}
	})
}

func TestAllowWriteAndReadOnlyElsewhere(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(writeCwd)
		r := w.sh(s, "echo x > ok.txt; echo y > /etc/nope")
		expect(t, r, 1, "/etc/nope: "+refusedText("EROFS"))
		if data, _ := os.ReadFile(w.path("home/proj/ok.txt")); string(data) != "x\n" {
			t.Fatalf("write inside allowWrite did not reach the host: %q", data)
		}
	})
}

func TestDenyWriteInsideAllowWrite(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/sub")
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["sub"]}`)
		expect(t, w.sh(s, "touch sub/x"), 1, "touch: cannot touch 'sub/x': "+refusedText("EROFS"))
		expect(t, w.sh(s, "touch y"), 0)
	})
}

func TestDenyWriteAboveAllowWriteWins(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/sub")
		s := fsSettings(`{"denyRead":[],"allowWrite":[".","sub"],"denyWrite":["."]}`)
		expect(t, w.sh(s, "touch sub/x"), 1, refusedText("EROFS"))
	})
}

func TestWriteThroughSymlinkLeadingOut(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		out := w.mkdir("outside")
		w.symlink(out, "home/proj/link")
		s := fsSettings(writeCwd)
		expect(t, w.sh(s, "echo x > link/f"), 1, "link/f: "+refusedText("EROFS"))
		if exists(out + "/f") {
			t.Fatal("write through a symlink escaped the write roots")
		}
		// An allowWrite through a symlink the caller could have made grants
		// nothing (issue 10, item 7; escape_paths_test.go has the rest).
		w.symlink(w.dir, "home/in")
		s2 := fsSettings(`{"denyRead":[],"allowWrite":["~/in"],"denyWrite":[]}`)
		expect(t, w.sh(s2, "echo y > ~/in/g"), 1, `"~/in" grants nothing`, refusedText("EROFS"))
		if exists(w.path("home/proj/g")) {
			t.Fatal("allowWrite through a planted symlink granted its target")
		}
	})
}

func TestMissingDenyWritePathCannotBeCreated(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["newfile","newdir/deeper"]}`)
		expect(t, w.sh(s, "echo x > newfile"), 1, "newfile: "+errnoText[placeholderRefused()])
		expect(t, w.sh(s, "mkdir -p newdir/deeper"), 1, refusedText("EROFS"))
		expect(t, w.sh(s, "rm -f newfile"), 1, refusedText("EBUSY"))
		for _, p := range []string{"newfile", "newdir"} {
			if exists(w.path("home/proj/" + p)) {
				t.Fatalf("placeholder %s left on the host", p)
			}
		}
	})
}

func TestMandatoryDenies(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/.git/HEAD", "ref: refs/heads/main\n")
		w.write("home/proj/.git/config", "[core]\n")
		w.write("home/proj/.git/hooks/pre-commit", "#!/bin/sh\n")
		w.write("home/proj/a/b/.bashrc", "")
		w.write("home/proj/.claude/settings.json", "{}")
		s := fsSettings(writeCwd)
		expect(t, w.sh(s, "echo >> .git/hooks/pre-commit"), 1, ".git/hooks/pre-commit: "+refusedText("EROFS"))
		expect(t, w.sh(s, "echo >> .git/config"), 1, ".git/config: "+refusedText("EROFS"))
		expect(t, w.sh(s, "echo >> .bashrc"), 1, ".bashrc: "+errnoText[placeholderRefused()])
		expect(t, w.sh(s, "echo >> a/b/.bashrc"), 1, "a/b/.bashrc: "+refusedText("EROFS"))
		expect(t, w.sh(s, "mkdir -p .vscode/x"), 1, refusedText("EROFS"))
		expect(t, w.sh(s, "mkdir -p .claude/commands"), 1)
		expect(t, w.sh(s, "echo '{}' > .claude/settings.json"), 1, refusedText("EROFS")) // the whole of .claude
		expect(t, w.sh(s, "mv .git .g"), 1, refusedText("EBUSY"))
		expect(t, w.sh(s, "mv a x"), 1, refusedText("EBUSY"))
		expect(t, w.sh(s, "echo ok > .git/description"), 0) // the rest of .git stays writable
		for _, p := range []string{".bashrc", ".gitconfig", ".mcp.json", ".vscode", ".idea", ".zshrc"} {
			if exists(w.path("home/proj/" + p)) {
				t.Fatalf("placeholder %s left on the host after the run", p)
			}
		}
		if !exists(w.path("home/proj/.claude/settings.json")) || exists(w.path("home/proj/.claude/commands")) {
			t.Fatal(".claude placeholders mishandled")
		}
		g := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[],"allowGitConfig":true}`)
		expect(t, w.sh(g, "echo '# ok' >> .git/config"), 0)
		expect(t, w.sh(g, "echo >> .git/hooks/pre-commit"), 1, refusedText("EROFS"))
	})
}

func TestMandatoryDenyDepth(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/a/b/c/.bashrc", "")
		deep := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + writeCwd + `,"mandatoryDenySearchDepth":4}`
		expect(t, w.sh(deep, "echo >> a/b/c/.bashrc"), 1, refusedText("EROFS"))
		expect(t, w.sh(fsSettings(writeCwd), "echo >> a/b/c/.bashrc"), 0) // below the default depth of 3
	})
}

func TestFilesystemDisabled(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/.ssh/id_rsa", "SECRET")
		s := fsSettings(`{"disabled":true,"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]}`)
		expect(t, w.sh(s, "cat ~/.ssh/id_rsa && touch made"), 0, "SECRET")
		if !exists(w.path("home/proj/made")) {
			t.Fatal("filesystem.disabled should leave the filesystem writable")
		}
	})
}
