//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The path escapes of issue 10 (items 3, 7, 14, 16, 18, 19, 20, 21): how a
// path in the settings is resolved, and what a command that may write
// somewhere can plant there to change what the next run is given. The race
// of item 7 is in escape_race_test.go.

// pathSettings builds a filesystem section from its lists (nil: []).
func pathSettings(denyRead, allowRead, allowWrite, denyWrite []string) string {
	list := func(l []string) string {
		if l == nil {
			l = []string{}
		}
		b, _ := json.Marshal(l)
		return string(b)
	}
	return fsSettings(`{"denyRead":` + list(denyRead) + `,"allowRead":` + list(allowRead) +
		`,"allowWrite":` + list(allowWrite) + `,"denyWrite":` + list(denyWrite) + `}`)
}

// TestEscapeDenyReadRenameParent (item 3): with denyRead
// "./config/secrets.env" and allowWrite ".", `mv config config2` carried the
// file out from under its mount, and the next run read config2/secrets.env.
// A read-denied path's writable ancestors are pinned now, as a protected
// path's are: the rename fails with EBUSY, for a file, a pattern's match and
// a directory alike.
func TestEscapeDenyReadRenameParent(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const secret = "SECRET-ENV-5e1f"
		w.write("home/proj/config/secrets.env", secret)
		w.write("home/proj/keys/a/x.pem", secret)
		w.write("home/proj/vault/inner/k", secret)
		w.mkdir("home/proj/free")
		s := pathSettings([]string{"./config/secrets.env", "keys/**/*.pem", "vault/inner"}, nil, []string{"."}, nil)
		for _, c := range [][2]string{{"config", "config2"}, {"keys", "keys2"}, {"keys/a", "keys/b"}, {"vault", "vault2"}} {
			p := w.probe(s, "rename", c[0], c[1])
			want(t, p, "rename", refused("EBUSY"))
		}
		p := w.probe(s, "read", "config/secrets.env")
		want(t, p, "read", "EACCES")
		noLeak(t, p, secret)
		for _, f := range []string{"config/secrets.env", "keys/a/x.pem", "vault/inner/k"} {
			if !exists(w.path("home/proj/" + f)) {
				t.Fatalf("ESCAPE: %s moved on the host", f)
			}
		}
		// Controls: a directory nothing denied lies under moves; and
		// without the deny the same rename works, and the next run reads
		// the file at its new name, which is what the pin prevents.
		want(t, w.probe(s, "rename", "free", "moved"), "rename", "ok")
		open := pathSettings(nil, nil, []string{"."}, nil)
		want(t, w.probe(open, "rename", "config", "config2"), "rename", "ok")
		expect(t, w.probe(s, "read", "config2/secrets.env").result, 0, "RESULT read ok", "DATA "+secret)
	})
}

// TestEscapeAllowWriteThroughSymlink (item 7): allowWrite "<p>/build" with
// build -> /elsewhere mounted /elsewhere writable. A grant is on the path
// as written: a path through a symlink the caller could have made grants
// nothing, and srt says so.
func TestEscapeAllowWriteThroughSymlink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		elsewhere := w.mkdir("elsewhere")
		w.mkdir("home/proj/p")
		w.symlink(elsewhere, "home/proj/p/build")
		build := w.path("home/proj/p/build")
		s := pathSettings(nil, nil, []string{build}, nil)
		for _, target := range []string{elsewhere + "/pwned", build + "/pwned"} {
			p := w.probe(s, "create", target)
			want(t, p, "create", refused("EROFS"))
			expect(t, p.result, 0, `filesystem.allowWrite.0 "`+build+`" grants nothing: it passes through the symlink `+build+" -> "+elsewhere)
		}
		if exists(elsewhere + "/pwned") {
			t.Fatal("ESCAPE: the write reached the symlink's target")
		}
		// Controls: the same creates work where the path is a directory,
		// and where the outside directory is granted itself.
		os.Remove(build)
		w.mkdir("home/proj/p/build")
		want(t, w.probe(s, "create", build+"/made"), "create", "ok")
		want(t, w.probe(pathSettings(nil, nil, []string{elsewhere}, nil), "create", elsewhere+"/made"), "create", "ok")
		if !exists(build+"/made") || !exists(elsewhere+"/made") {
			t.Fatal("control creates did not reach the host")
		}
	})
}

// TestTrustedSymlinkCarriesAGrant: a symlink the caller could not have made
// (root's, in root's directory: /home -> /data/home) is followed for a user;
// for root, which can write every directory, no symlink is trusted.
func TestTrustedSymlinkCarriesAGrant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a symlink the test user does not own")
	}
	forEach(t, func(t *testing.T, w *workspace) {
		shared := w.mkdir("shared")
		sys := w.path("sys")
		if err := os.Mkdir(sys, 0o755); err != nil { // root's
			t.Fatal(err)
		}
		if err := os.Symlink(shared, sys+"/data"); err != nil {
			t.Fatal(err)
		}
		s := pathSettings(nil, nil, []string{sys + "/data"}, nil)
		p := w.probe(s, "create", shared+"/made")
		if w.r.uid == 0 {
			want(t, p, "create", refused("EROFS"))
			expect(t, p.result, 0, "srt runs as root, which can write every directory")
			return
		}
		want(t, p, "create", "ok")
		expect(t, p.result, 0, "!grants nothing")
		if !exists(shared + "/made") {
			t.Fatal("the trusted link's grant did not reach the host")
		}
	})
}

// TestEscapeSymlinkedAllowAcrossRuns (items 14 and 19): with denyRead
// "~/secret", allowRead "data" and allowWrite [".", "out"], a first run
// replaced data and out by symlinks to ~/secret, and the next run read the
// secret through data and wrote into ~/secret through out. The other forms:
// an allowRead pattern matching a planted link, a link made before any run
// (docs -> ~/.ssh), a single file (cfg.json -> aws/credentials).
func TestEscapeSymlinkedAllowAcrossRuns(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const key, sshKey, awsKey = "SECRET-RSA-91aa", "SECRET-SSH-0b7d", "SECRET-AWS-3c2e"
		secret := filepath.Dir(w.write("home/secret/id_rsa", key))
		w.write("home/.ssh/id_ed25519", sshKey)
		w.write("home/proj/aws/credentials", awsKey)
		w.mkdir("home/proj/data")
		w.mkdir("home/proj/out")
		w.symlink(w.path("home/.ssh"), "home/proj/docs")
		w.symlink("aws/credentials", "home/proj/cfg.json")
		s := pathSettings([]string{"~/secret", "~/.ssh", "aws"}, []string{"data", "d*", "docs", "cfg.json"}, []string{".", "out"}, nil)

		// Run 1 plants the links, as the same settings allow.
		for _, l := range []string{"data", "out"} {
			want(t, w.probe(s, "replace-by-symlink", secret, l), "move-aside", "ok", "symlink", "ok")
		}
		// Run 2 and later read and write through them.
		for _, c := range []struct{ path, secret, warn string }{
			{"data/id_rsa", key, `filesystem.allowRead.0 "data" grants nothing: it passes through the symlink ` + w.path("home/proj/data") + " -> " + secret},
			{"docs/id_ed25519", sshKey, `filesystem.allowRead.2 "docs" grants nothing`},
			{"cfg.json", awsKey, `filesystem.allowRead.3 "cfg.json" grants nothing`},
		} {
			p := w.probe(s, "read", c.path)
			want(t, p, "read", refused("ENOENT")) // the denied directory's empty tmpfs
			noLeak(t, p, c.secret)
			expect(t, p.result, 0, c.warn)
		}
		p := w.probe(s, "create", "out/planted")
		// Into the denied directory's tmpfs, in memory; the Landlock
		// backend has none: a denied directory takes no write.
		planted := "ok"
		if testBackend == "landlock" {
			planted = "EROFS"
		}
		want(t, p, "create", planted)
		expect(t, p.result, 0, `filesystem.allowWrite.1 "out" grants nothing`)
		if exists(secret + "/planted") {
			t.Fatal("ESCAPE: a write through the planted link reached the denied directory")
		}
		// Controls: where nothing is denied the probe reads through each
		// link, and where the secret directory is granted the create
		// reaches it.
		open := pathSettings(nil, nil, []string{"."}, nil)
		for path, data := range map[string]string{"data/id_rsa": key, "docs/id_ed25519": sshKey, "cfg.json": awsKey} {
			expect(t, w.probe(open, "read", path).result, 0, "RESULT read ok", "DATA "+data)
		}
		want(t, w.probe(pathSettings(nil, nil, []string{".", "~/secret"}, nil), "create", "out/planted"), "create", "ok")
		if !exists(secret + "/planted") {
			t.Fatal("control: the create through the link did not reach the host")
		}
	})
}

// TestEscapeBracketsInWorkingDirectory (item 16): in "/x/[WIP] project",
// denyRead "**/.env" denied nothing and said nothing: the folder's name was
// read as a bracket set. The working directory is literal.
func TestEscapeBracketsInWorkingDirectory(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const secret = "SECRET-WIP-77e0"
		w.dir = w.mkdir("home/[WIP] project")
		w.write("home/[WIP] project/.env", secret)
		w.write("home/[WIP] project/sub/.env", secret)
		s := pathSettings([]string{"**/.env", "sub/*"}, nil, nil, nil)
		for _, f := range []string{".env", "sub/.env"} {
			p := w.probe(s, "read", f)
			want(t, p, "read", "EACCES")
			noLeak(t, p, secret)
		}
		// Control: the same reads without the deny.
		expect(t, w.probe(pathSettings(nil, nil, nil, nil), "read", "sub/.env").result, 0, "DATA "+secret)
	})
}

// TestEscapeDenyPatternThroughSymlink (item 18): denyRead "<p>/**/.env"
// with <p>/out -> ../outside left <p>/out/deep/.env readable. A deny pattern
// follows symlinked directories and hides the real file.
func TestEscapeDenyPatternThroughSymlink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		const secret = "SECRET-OUT-2f9d"
		w.write("home/outside/deep/.env", secret)
		w.symlink("../outside", "home/proj/out")
		s := pathSettings([]string{w.dir + "/**/.env"}, nil, nil, nil)
		for _, f := range []string{"out/deep/.env", w.path("home/outside/deep/.env")} {
			p := w.probe(s, "read", f)
			want(t, p, "read", "EACCES")
			noLeak(t, p, secret)
		}
		expect(t, w.probe(pathSettings(nil, nil, nil, nil), "read", "out/deep/.env").result, 0, "DATA "+secret)
	})
}

// TestEscapeDotDotAfterWildcard (item 20): allowWrite "*/../keep" and
// "[ab]/.." made the keep directory and the whole project writable: ".."
// was folded before the pattern was seen. An allow whose ".." follows a
// wildcard is a pattern and grants nothing, with a warning; a deny stops srt
// with a settings error naming it.
func TestEscapeDotDotAfterWildcard(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.mkdir("home/proj/a")
		w.mkdir("home/proj/keep")
		w.write("home/proj/secret.txt", "SECRET-DOT-1d4b")
		s := pathSettings(nil, nil, []string{"*/../keep", "[ab]/.."}, nil)
		for _, f := range []string{"keep/x", "x"} {
			p := w.probe(s, "create", f)
			want(t, p, "create", refused("EROFS"))
			expect(t, p.result, 0, `filesystem.allowWrite.0 "*/../keep" is a pattern`, `filesystem.allowWrite.1 "[ab]/.." is a pattern`)
		}
		r := w.sh(pathSettings([]string{"*/../secret.txt"}, nil, nil, nil), "true")
		expect(t, r, 1, `filesystem.denyRead.0 "*/../secret.txt": a ".." after a wildcard cannot be expanded`)
		// Controls: a ".." before any wildcard is folded as before.
		want(t, w.probe(pathSettings(nil, nil, []string{"a/../keep"}, nil), "create", "keep/x"), "create", "ok")
		want(t, w.probe(pathSettings([]string{"a/../secret.txt"}, nil, nil, nil), "read", "secret.txt"), "read", "EACCES")
	})
}

// TestEscapeDenyThroughRootSymlink (item 21): a command that could write
// where a deny matched planted `build -> /`, and every later run failed
// (`cannot run /usr/bin/bash`). A deny that leads through a symlink to "/"
// or above itself is ignored, with a warning naming the entry and the link.
func TestEscapeDenyThroughRootSymlink(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/build/f", "BUILD")
		w.write("home/proj/out/x/f", "OUT")
		w.mkdir("home/proj/gen")
		w.write("home/proj/public.txt", "PUBLIC-7a")
		s := pathSettings([]string{"build", "out/*"}, nil, []string{"."}, []string{"gen"})
		credS := strings.TrimSuffix(s, "}") + `,"credentials":{"files":[{"path":"up","mode":"deny"}]}}`
		// Control first: the denies hold while the paths are directories.
		want(t, w.probe(s, "read", "build/f"), "read", refused("ENOENT"))
		want(t, w.probe(s, "create", "gen/f"), "create", refused("EROFS"))
		// A run that may write the project (with these settings, where the
		// deny matches a name that does not exist yet, or with others)
		// plants the links.
		open := pathSettings(nil, nil, []string{"."}, nil)
		for _, l := range [][2]string{{"/", "build"}, {"/", "out/x"}, {"/", "gen"}, {"..", "up"}} {
			want(t, w.probe(open, "replace-by-symlink", l[0], l[1]), "symlink", "ok")
		}
		// Every later run still runs.
		p := w.probe(credS, "read", "public.txt")
		want(t, p, "read", "ok")
		for _, warn := range []string{
			`filesystem.denyRead.0 "build" is ignored where it passes through the symlink ` + w.path("home/proj/build") + " -> /, which leads to /",
			`filesystem.denyRead.1 "out/*" is ignored where it passes through the symlink ` + w.path("home/proj/out/x") + " -> /",
			`filesystem.denyWrite.0 "gen" is ignored`,
			`credentials.files.0.path "up" is ignored where it passes through the symlink ` + w.path("home/proj/up") + " -> .., which leads to " + w.home,
		} {
			expect(t, p.result, 0, warn)
		}
	})
}
