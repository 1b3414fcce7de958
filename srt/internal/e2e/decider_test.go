//go:build linux

package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	fakeOnce sync.Once
	fakeBin  string
	fakeErr  error
)

// fakeDeciderBin is a directory with srt, srt-init and srt-proxy and, as
// "decider", the misbehaving fakedecider: srt runs the decider it finds
// beside itself.
func fakeDeciderBin(t *testing.T) string {
	fakeOnce.Do(func() {
		fakeBin, fakeErr = os.MkdirTemp("", "srt-e2e-fake-")
		if fakeErr != nil {
			return
		}
		os.Chmod(fakeBin, 0o755)
		b := exec.Command("go", "build", "-o", filepath.Join(fakeBin, "decider"), "github.com/srt-sandbox/srt/internal/e2e/fakedecider")
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := b.CombinedOutput(); err != nil {
			fakeErr = &buildError{string(out)}
			return
		}
		for _, name := range []string{"srt", "srt-init", "srt-proxy"} {
			if fakeErr = copyFile(filepath.Join(bin, name), filepath.Join(fakeBin, name)); fakeErr != nil {
				return
			}
		}
	})
	if fakeErr != nil {
		t.Fatal(fakeErr)
	}
	return fakeBin
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "building fakedecider: " + e.out }

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, in)
	return err
}

func TestDeciderThatMisbehavesFailsClosed(t *testing.T) {
	up := startUpstream(t)
	dir := fakeDeciderBin(t)
	for _, c := range []struct{ mode, want string }{
		{"allow", "200\n200\n"}, // the control: the fake decider works
		{"late", "503\n"},
		{"garbage", "503\n503\n"},
		{"die", "503\n503\n"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			forEach(t, func(t *testing.T, w *workspace) {
				s := w.settings(netSettings(nil, nil, ""))
				cmd := curlCode + "http://" + up.addr() + "/a"
				if c.mode != "late" {
					cmd += "; " + curlCode + "http://" + up.addr() + "/b"
				}
				run := w.command([]string{"FAKE_DECIDER=" + c.mode}, "-s", s, "-c", cmd)
				run.Path = filepath.Join(dir, "srt")
				out, _ := run.Output()
				if string(out) != c.want {
					t.Fatalf("decider %s: got %q, want %q", c.mode, out, c.want)
				}
			})
		})
	}
}
