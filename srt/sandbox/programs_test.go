//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// An init stage the command's own sandbox could have replaced is refused
// with ErrUntrustedProgram, naming the file and the option to fix; the
// same copy runs where the sandbox may not write it.
func TestUntrustedInitExecutable(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	initExe := filepath.Join(dir, "init")
	if err := os.WriteFile(initExe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":["`+dir+`"],"denyWrite":[]}}`), sandbox.Options{InitExecutable: initExe})
	defer m.Close()
	_, err = m.Command(context.Background(), "true")
	want := "srt-init at " + initExe + ": the sandbox may write " + dir + " (filesystem.allowWrite.0), so a sandboxed command could have put " + initExe + " there; srt will not run it: set Options.InitExecutable to a program only root or you can change and no sandbox may write"
	if !errors.Is(err, sandbox.ErrUntrustedProgram) || err.Error() != want {
		t.Fatalf("want ErrUntrustedProgram:\n%s\ngot %v", want, err)
	}
	if out, code := run(t, m, "echo ok", sandbox.WithFilesystem(settings.Filesystem{})); code != 0 || out != "ok\n" {
		t.Fatalf("control: %q (status %d)", out, code)
	}
}

// TestMissingShell: a missing shell is a missing dependency, named as
// itself, not as bubblewrap.
func TestMissingShell(t *testing.T) {
	_, err := sandbox.New(parse(t, plain), sandbox.Options{Shell: "srt-no-such-shell"})
	if !errors.Is(err, sandbox.ErrMissingDependency) || err.Error() != "Shell 'srt-no-such-shell' not found in PATH" {
		t.Fatalf("New with a missing shell: %v", err)
	}
}
