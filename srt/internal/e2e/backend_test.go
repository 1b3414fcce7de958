//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/backendtest"
)

// testBackend is the backend the suite runs srt with: SRT_TEST_BACKEND
// ("landlock", "bubblewrap"; unset: srt's own choice). scripts/test runs
// the suite a second time with it set to landlock.
var testBackend = backendtest.Backend

// backendArgs are the flags that select testBackend.
func backendArgs() []string {
	if testBackend == "" {
		return nil
	}
	if testBackend == "landlock" && os.Geteuid() == 0 {
		// As root the backend refuses to run unless told it may leave
		// root's chmod unchecked (docs/security.md): the escape table
		// names what that costs.
		return []string{"--backend", testBackend, "--allow-weaker=root"}
	}
	return []string{"--backend", testBackend}
}

// announcement starts the line srt writes when it runs the Landlock
// backend because it was asked to (the suite's forced backend).
const announcement = "srt: warning: srt runs the command under its Landlock backend"

// withoutAnnouncement is s without that line: a test of srt's other
// output under the Landlock backend looks past it.
func withoutAnnouncement(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, announcement) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// refused is the errno a refused filesystem operation fails with under
// the backend the suite runs, given bubblewrap's: bubblewrap refuses with
// its mounts (a read-only bind: EROFS; a mount point, which can be neither
// renamed nor removed: EBUSY; a link across mounts: EXDEV; a hidden path's
// empty stand-in: ENOENT). The Landlock backend has no mounts: its
// read-only supervisor answers EROFS where the rules refuse a write (a
// protected name removed or renamed included), and Landlock refuses the
// rest with EACCES. Same protection, other errno: the tests still assert
// the exact failure for each backend.
func refused(bwrapErrno string) string {
	if testBackend == "landlock" {
		switch bwrapErrno {
		case "EROFS", "EBUSY":
			return "EROFS"
		case "EXDEV", "ENOENT":
			return "EACCES"
		}
		panic("refused: " + bwrapErrno + " is no errno of a bubblewrap mount")
	}
	return bwrapErrno
}

// placeholderRefused is the errno of a write to the placeholder of a
// missing protected file: bubblewrap's /dev/null, mode 0, says EACCES; the
// Landlock backend's placeholder is srt's own empty file, read-only by the
// rules (EROFS, its read-only supervisor).
func placeholderRefused() string {
	if testBackend == "landlock" {
		return "EROFS"
	}
	return "EACCES"
}

// refusedText is refused as strerror says it (shells, coreutils).
func refusedText(bwrapErrno string) string {
	return errnoText[refused(bwrapErrno)]
}

// errnoText is strerror(3)'s text (Go's own is lower-case).
var errnoText = map[string]string{
	"EROFS":  "Read-only file system",
	"EBUSY":  "Device or resource busy",
	"EXDEV":  "Invalid cross-device link",
	"ENOENT": "No such file or directory",
	"EACCES": "Permission denied",
}

// skipOnLandlock skips the test under the Landlock backend where the
// table (backendtest.Probes) says so, with its reason.
func skipOnLandlock(t *testing.T) { t.Helper(); backendtest.Skip(t) }

// skipPart says whether the part of the test the table names is skipped
// under the Landlock backend.
func skipPart(t *testing.T, part string) bool { t.Helper(); return backendtest.SkipPart(t, part) }

// TestBackendTableInDocs: docs/security.md shows the table as the code
// has it, and every test a skipping row names calls skipOnLandlock.
func TestBackendTableInDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := backendtest.Table(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/security.md, \"Which probes each backend stops\", must hold the table of backendtest.Probes (srt/internal/backendtest) as it is:\n%s", want)
	}
	src := testSources(t)
	seen := map[string]bool{}
	for _, p := range backendtest.Probes {
		for _, n := range p.Tests {
			if seen[n] {
				t.Errorf("the table names %s twice", n)
			}
			seen[n] = true
			top, _, _ := strings.Cut(n, "/")
			body, ok := funcBody(src, top)
			switch {
			case !ok:
				t.Errorf("the table names %s, which no test of srt/internal/e2e or srt/sandbox declares", n)
			case p.Skip == "":
			case strings.Count(n, "/") == 1 && (strings.Contains(body, fmt.Sprintf("skipPart(t, %q)", n[len(top)+1:])) || strings.Contains(body, fmt.Sprintf("backendtest.SkipPart(t, %q)", n[len(top)+1:]))):
			case !strings.Contains(body, "skipOnLandlock(t)") && !strings.Contains(body, "backendtest.Skip(t)"):
				t.Errorf("the table skips %s under the Landlock backend, and it does not call skipOnLandlock (or skipPart)", n)
			}
		}
	}
}

// testSources are the test files of this package and of srt/sandbox (the
// library's suite, which runs under the Landlock backend too),
// concatenated.
func testSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, dir := range []string{".", "../../sandbox"} {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if strings.HasSuffix(f.Name(), "_test.go") {
				data, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				b.Write(data)
			}
		}
	}
	return b.String()
}

// funcBody is the text of func name up to the next top-level func.
func funcBody(src, name string) (string, bool) {
	i := strings.Index(src, "\nfunc "+name+"(")
	if i < 0 {
		return "", false
	}
	rest := src[i+1:]
	if j := strings.Index(rest, "\nfunc "); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}
