//go:build linux

package e2e

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// passRun runs srt with args, giving it files as descriptors 3, 4, … (nil
// leaves that number closed), and returns the run. It closes nothing.
func (w *workspace) passRun(files []*os.File, args ...string) result {
	w.t.Helper()
	cmd := w.command(nil, args...)
	cmd.ExtraFiles = files
	return w.run(cmd)
}

// TestPassFD gives the command descriptors with --pass-fd: a file and a
// pipe arrive at the numbers named, in both directions; every descriptor
// not named stays closed; the range and conflicts are refused with the
// flag's message before anything runs.
func TestPassFD(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		in := w.write("in.txt", "from-a-file\n")
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pw.WriteString("from-a-pipe\n")
		pw.Close()
		// fd 3: the file, fd 4: not passed, fd 5: the read end of a pipe,
		// fd 8: the write end of another.
		files := []*os.File{f, f, pr, nil, nil, outW}
		r := w.passRun(files, "-s", w.settings(fsSettings(writeCwd)), "--pass-fd", "3", "--pass-fd", "5", "--pass-fd", "8", "-c",
			`cat <&3; cat <&5; echo to-the-host >&8; for n in 4 6 7; do if { true >&$n; } 2>/dev/null; then echo "OPEN $n"; fi; done`)
		outW.Close()
		pr.Close()
		got, _ := io.ReadAll(outR)
		outR.Close()
		expect(t, r, 0, "from-a-file", "from-a-pipe", "!OPEN")
		if string(got) != "to-the-host\n" {
			t.Fatalf("the write end passed as 8 carried %q, want %q\n%s", got, "to-the-host\n", r)
		}

		// Without --pass-fd nothing above 2 reaches the command.
		r = w.passRun([]*os.File{f}, "-s", w.settings(fsSettings(writeCwd)), "-c", `if { cat <&3; } 2>/dev/null; then echo LEAKED; fi; echo done`)
		expect(t, r, 0, "done", "!LEAKED", "!from-a-file")

		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--pass-fd", "2"}, "srt: option '--pass-fd <fd>' argument '2' is invalid. must be an integer file descriptor from 3 to 8."},
			{[]string{"--pass-fd", "9"}, "srt: option '--pass-fd <fd>' argument '9' is invalid. must be an integer file descriptor from 3 to 8."},
			{[]string{"--pass-fd", "x3"}, "argument 'x3' is invalid"},
			{[]string{"--pass-fd", "6"}, "srt: --pass-fd 6 is not usable: bad file descriptor; open it for srt (for example 6<FILE or 6<&0) or drop the option"},
			{[]string{"--control-fd", "3", "--pass-fd", "3"}, "srt: --pass-fd 3 is also --control-fd's descriptor; give each option its own"},
			{[]string{"--violations-fd", "3", "--pass-fd", "3"}, "srt: --pass-fd 3 is also --violations-fd's descriptor; give each option its own"},
		} {
			r := w.passRun([]*os.File{f}, append(c.args, "-c", "echo RAN")...)
			expect(t, r, 1, c.want, "!RAN")
		}
	})
}

// TestEscapePassFD: a passed descriptor is checked as the standard ones
// are. A directory (openat() beneath it walks the host's mount past the
// denies) and a socket of the host's network are refused (125, before the
// command runs); a read-only file the sandbox may not write, which the
// command could reopen for writing through /proc/self/fd/N, cannot be
// written either way.
func TestEscapePassFD(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/secret/key", "TOP-SECRET\n")
		dir, err := os.Open(w.path("home/secret"))
		if err != nil {
			t.Fatal(err)
		}
		defer dir.Close()
		deny := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["` + w.path("home/secret") + `"],"allowWrite":["."],"denyWrite":[]}}`
		r := w.passRun([]*os.File{dir}, "-s", w.settings(deny), "--pass-fd", "3", "-c", `cat /proc/self/fd/3/key; echo RAN`)
		expect(t, r, 125, "srt: descriptor 3 (--pass-fd 3) is a directory, through which the command could open the files beneath it past every filesystem rule", "!TOP-SECRET", "!RAN")

		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		sock := os.NewFile(uintptr(fd), "udp")
		defer sock.Close()
		r = w.passRun([]*os.File{nil, sock}, "-s", w.settings(deny), "--pass-fd", "4", "-c", `echo RAN`)
		expect(t, r, 125, "srt: descriptor 4 (--pass-fd 4) is a network socket of the host's", "!RAN")

		// A file the runner may write, outside every write grant, passed
		// read-only: writing through the descriptor or reopening it for
		// writing must both fail, and the file must stay as it was.
		target := w.write("home/protected.txt", "ORIGINAL\n")
		ro, err := os.Open(target)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		cwdOnly := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyWrite":[]}}`
		r = w.passRun([]*os.File{ro}, "-s", w.settings(cwdOnly), "--pass-fd", "3", "-c",
			`cat <&3; echo CHANGED >&3; echo CHANGED > /proc/self/fd/3; echo CHANGED >> /proc/self/fd/3; true`)
		if !strings.Contains(r.stdout, "ORIGINAL") && r.code != 1 {
			t.Fatalf("the read-only file did not arrive and srt did not refuse it:\n%s", r)
		}
		b, _ := os.ReadFile(target)
		if string(b) != "ORIGINAL\n" {
			t.Fatalf("ESCAPE: a read-only file passed with --pass-fd was written: %q\n%s", b, r)
		}
	})
}
