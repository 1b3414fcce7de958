//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostMain is a host program in a module of its own.
const hostMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

func main() {
	cfg, _, err := settings.Load("/nonexistent/srt-settings.json", false)
	if err == nil {
		var m *sandbox.Manager
		if m, err = sandbox.New(cfg, sandbox.Options{}); err == nil {
			defer m.Close()
			var cmd *sandbox.Cmd
			if cmd, err = m.Command(context.Background(), "echo hello from the sandbox"); err == nil {
				defer cmd.Release()
				var out []byte
				out, err = cmd.Output()
				fmt.Printf("%s", out)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// TestLibraryDocGoMod: the go.mod that docs/library.md gives a host
// module works: with the clone's path put in, the module tidies and
// builds outside this workspace, and the host runs a sandboxed command.
// The requirements come from the module cache or the Go module proxy
// (GOPROXY as set): a fresh machine's cache holds only what the workspace
// builds, not the older versions a host module's go.sum lists.
func TestLibraryDocGoMod(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```go.mod\n")
	if !ok {
		t.Fatal("docs/library.md has no go.mod block")
	}
	block, _, _ = strings.Cut(block, "```")
	if !strings.Contains(block, "/path/to/srt-clone/") {
		t.Fatalf("the go.mod block does not name /path/to/srt-clone:\n%s", block)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", strings.ReplaceAll(block, "/path/to/srt-clone", root))
	write("main.go", hostMain)
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOSUMDB=off", "CGO_ENABLED=0")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "host", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a module with the doc's go.mod: %v\n%s\ngo.mod:\n%s", strings.Join(args, " "), err, out, block)
		}
	}
	host := exec.Command(filepath.Join(dir, "host"))
	host.Dir = dir
	out, err := host.CombinedOutput()
	if err != nil || string(out) != "hello from the sandbox\n" {
		t.Fatalf("the host: %v\n%s", err, out)
	}
}
