//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The docs' console blocks are transcripts: each "$ " line is typed into
// one shell, in a fresh directory, with no settings file, and the rest of
// the block is what that shell prints (stdout and stderr interleaved, as a
// terminal shows them). These tests run them as printed.

// TestREADMEFirstExample runs the README's first example, the one a new
// user runs first.
func TestREADMEFirstExample(t *testing.T) {
	blocks := consoleBlocks(t, "README.md", "## A first sandboxed command")
	if !strings.HasPrefix(blocks[0].script, "srt ") {
		t.Fatalf("the README's first example does not start with srt: %q", blocks[0].script)
	}
	forEach(t, func(t *testing.T, w *workspace) {
		runConsoleBlock(t, w, blocks[0])
	})
}

// TestCLIDocTranscripts runs every console block of docs/cli.md: the
// settings-file messages and the usage errors.
func TestCLIDocTranscripts(t *testing.T) {
	blocks := consoleBlocks(t, "docs/cli.md", "")
	if len(blocks) < 2 {
		t.Fatalf("docs/cli.md has %d console blocks; want the messages' and the usage errors'", len(blocks))
	}
	forEach(t, func(t *testing.T, w *workspace) {
		for i, b := range blocks {
			// Each block in a directory of its own, as printed ("in an
			// empty directory").
			w.dir = w.mkdir("home/block" + itoa(i))
			runConsoleBlock(t, w, b)
		}
	})
}

// TestSettingsDocLoadingMessages checks the messages docs/settings.md's
// "Loading" table quotes against srt's, with PATH the file's name, "…"
// and <placeholders> standing for any text.
func TestSettingsDocLoadingMessages(t *testing.T) {
	doc := readDoc(t, "docs/settings.md")
	_, table, _ := strings.Cut(doc, "\n## Loading\n")
	table, _, _ = strings.Cut(table, "\n## ")
	row := regexp.MustCompile("(?m)^\\| ([^|]+) \\| exit 1: `([^`]+)`")
	quoted := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		quoted[m[1]] = m[2]
	}
	cases := []struct {
		row      string
		setup    func(w *workspace) string // returns the -s argument
		rootSkip bool                      // root reads any file: no EACCES
	}{
		{"`-s PATH`, file absent", func(w *workspace) string { return "absent.json" }, false},
		{"file empty or only whitespace", func(w *workspace) string { w.write("home/proj/e.json", " \n"); return "e.json" }, false},
		{"file unreadable (permissions, a directory, …)", func(w *workspace) string {
			p := w.write("home/proj/u.json", "{}")
			os.Chmod(p, 0)
			return "u.json"
		}, true},
		{"not JSON, or a key twice in one object", func(w *workspace) string { w.write("home/proj/b.json", "{bad"); return "b.json" }, false},
		{"not a valid config", func(w *workspace) string { w.write("home/proj/n.json", `{"network":{}}`); return "n.json" }, false},
	}
	if len(quoted) != len(cases) {
		t.Fatalf("docs/settings.md's Loading table quotes %d messages; this test knows %d: %q", len(quoted), len(cases), quoted)
	}
	forEach(t, func(t *testing.T, w *workspace) {
		for _, c := range cases {
			msg, ok := quoted[c.row]
			if !ok {
				t.Fatalf("docs/settings.md's Loading table has no row %q", c.row)
			}
			if c.rootSkip && w.r.uid == 0 {
				continue // the unprivileged runner checks it
			}
			path := c.setup(w)
			r := w.srt("-s", path, "true")
			pattern := regexp.QuoteMeta(msg)
			pattern = strings.ReplaceAll(pattern, "PATH", regexp.QuoteMeta(path))
			pattern = strings.ReplaceAll(pattern, "…", ".*")
			pattern = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(pattern, ".+")
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != 1 || !regexp.MustCompile("^"+pattern+"$").MatchString(first) {
				t.Errorf("%s: srt says\n%s\nnot what docs/settings.md quotes: %s", c.row, r, msg)
			}
		}
	})
}

// consoleBlock is one transcript: the "$ " lines as a script, the others
// as the output.
type consoleBlock struct {
	script, output string
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// consoleBlocks returns the console blocks of the doc after heading (the
// whole doc for ""): the first only when heading is given.
func consoleBlocks(t *testing.T, rel, heading string) []consoleBlock {
	t.Helper()
	doc := readDoc(t, rel)
	if heading != "" {
		_, after, ok := strings.Cut(doc, "\n"+heading+"\n")
		if !ok {
			t.Fatalf("%s has no %q", rel, heading)
		}
		doc = after
	}
	var blocks []consoleBlock
	for {
		_, rest, ok := strings.Cut(doc, "```console\n")
		if !ok {
			break
		}
		block, after, ok := strings.Cut(rest, "```\n")
		if !ok {
			t.Fatalf("%s: a console block does not end", rel)
		}
		doc = after
		var cmds, out []string
		for _, line := range strings.SplitAfter(block, "\n") {
			if c, ok := strings.CutPrefix(line, "$ "); ok {
				cmds = append(cmds, c)
			} else if line != "" {
				out = append(out, line)
			}
		}
		if len(cmds) == 0 || len(out) == 0 {
			t.Fatalf("%s: a console block has %d commands and %d lines of output", rel, len(cmds), len(out))
		}
		blocks = append(blocks, consoleBlock{strings.Join(cmds, ""), strings.Join(out, "")})
		if heading != "" {
			break
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("%s has no console block", rel)
	}
	return blocks
}

// runConsoleBlock runs b's script in one bash as the runner, in w.dir, with
// the built srt first on PATH, and compares what it prints.
func runConsoleBlock(t *testing.T, w *workspace, b consoleBlock) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(w.home, ".srt-settings.json")); err == nil {
		t.Fatal("the workspace has a settings file; the transcripts run without one")
	}
	cmd := exec.Command("/bin/bash", "-c", b.script)
	cmd.Dir = w.dir
	cmd.Env = w.env("PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
	if os.Geteuid() == 0 && w.r.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.r.uid), Gid: uint32(w.r.gid), Groups: []uint32{}}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe, as a terminal
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the transcript did not finish in 60 s:\n$ %s%s", b.script, out.String())
	}
	if err != nil {
		t.Fatalf("the transcript's shell: %v\n$ %s%s", err, b.script, out.String())
	}
	if out.String() != b.output {
		t.Errorf("the transcript\n$ %s prints\n%s\nnot what the doc shows:\n%s", b.script, out.String(), b.output)
	}
}

// TestSecurityReviewListExists checks that every package docs/security.md
// tells a reviewer to read exists, so a package renamed or split does not
// leave the list pointing at nothing.
func TestSecurityReviewListExists(t *testing.T) {
	doc := readDoc(t, "docs/security.md")
	_, table, ok := strings.Cut(doc, "\n## What a security reviewer must read\n")
	if !ok {
		t.Fatal("docs/security.md has no reviewer's list")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	row := regexp.MustCompile("(?m)^\\| (`[^|]+`) \\|")
	pkg := regexp.MustCompile("`([a-z0-9/-]+)`")
	n := 0
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, p := range pkg.FindAllStringSubmatch(m[1], -1) {
			n++
			files, _ := filepath.Glob(filepath.Join("..", "..", "..", p[1], "*.go"))
			if len(files) == 0 {
				t.Errorf("docs/security.md's reviewer's list names %s, which holds no Go package", p[1])
			}
		}
	}
	if n < 20 {
		t.Errorf("docs/security.md's reviewer's list names %d packages; the table was not read", n)
	}
}

// TestDocsCiteRealTests checks that every test or fuzzer the README and
// docs/*.md name (TestX, FuzzX, or a family "TestX…") is a function of
// some _test.go file of the repository.
func TestDocsCiteRealTests(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var funcs strings.Builder
	for _, mod := range []string{"srt", "srt-proxy", "decider"} {
		filepath.WalkDir(filepath.Join(root, mod), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, "_test.go") {
				b, _ := os.ReadFile(p)
				funcs.Write(b)
			}
			return nil
		})
	}
	src := funcs.String()
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	cite := regexp.MustCompile(`\b((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)(…)?`)
	n := 0
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cite.FindAllStringSubmatch(string(b), -1) {
			n++
			decl := "func " + m[1]
			if m[2] == "" {
				decl += "("
			}
			if !strings.Contains(src, decl) {
				t.Errorf("%s names %s%s, which no _test.go declares", filepath.Base(d), m[1], m[2])
			}
		}
	}
	if n < 50 {
		t.Errorf("the docs name %d tests; the search found too few to be working", n)
	}
}
